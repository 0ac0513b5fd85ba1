"""A local stdio MCP server for example task 5: the warehouse inventory.

Its tools answer only when ``INVENTORY_TOKEN`` in its environment is the token of
``inventory.env`` (the task's ``env_file``), as a server behind credentials would.
"""

import json
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).resolve().parent
ITEMS = json.loads((HERE / "inventory.json").read_text(encoding="utf-8"))
TOKEN = "example-inventory-token-7f3a"

server = MCPServer("inventory", instructions="Warehouse inventory: items, stock levels, thresholds.")


def _authorised():
    if os.environ.get("INVENTORY_TOKEN") != TOKEN:
        raise ValueError("unauthorised: INVENTORY_TOKEN is missing or wrong")


@server.tool()
def list_items() -> str:
    """List every item: sku, name, stock and reorder threshold (JSON)."""
    _authorised()
    return json.dumps(ITEMS)


@server.tool()
def get_item(sku: str) -> str:
    """One item by its sku (JSON), or an error when there is no such sku."""
    _authorised()
    for item in ITEMS:
        if item["sku"] == sku:
            return json.dumps(item)
    raise ValueError(f"no item with sku {sku!r}")


if __name__ == "__main__":
    server.run()
