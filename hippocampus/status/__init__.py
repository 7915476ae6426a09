"""One status, one voice: the read model (`read.build_status`), the background watches of Memory and of
the model (`watch`), and the one narrator (`narrator`) whose sentences /status, the viewer and MCP share."""
