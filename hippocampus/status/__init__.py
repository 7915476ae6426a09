"""One status, one voice: the read model, the watches, and the narrator /status, the viewer and MCP share."""
