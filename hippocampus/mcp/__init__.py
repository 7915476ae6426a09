"""The MCP endpoint: the tools for the main model, served at /mcp inside the Falcon app.

Optional: it needs the [mcp] extra (mcp 2.x and a2wsgi). Without it the service
runs as before and /mcp answers 404 saying how to install it.
"""
