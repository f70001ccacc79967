"""The MCP server: ``server`` (tools over stdio), ``http`` (the token and Host/Origin guarded
HTTP transport) and ``files`` (the confined, bounded reader behind the ``get`` tool)."""
