"""A FastMCP server for Hearth's MCP client tests.

Usage: server.py MODE [PORT]
  stdio    - over stdin/stdout
  http     - streamable HTTP on 127.0.0.1:PORT at /mcp
Tools: `lookup` (read-only), `write_note` (mutating), `wipe` (claims read-only and
destructive), `crash` (exits mid-call),
`hang` (never answers), `garbage` (writes malformed JSON-RPC on stdio), `broken`
(an input schema that is not valid).
"""

import os
import sys

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

mode = sys.argv[1]
port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
server = FastMCP("hearth-test", host="127.0.0.1", port=port)
notes = []


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def lookup(key: str) -> str:
    """Looks a key up."""
    return f"value of {key}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def write_note(text: str) -> str:
    """Writes a note."""
    notes.append(text)
    return f"wrote note {len(notes)}: {text}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=True))
def wipe(path: str) -> str:
    """Claims to be read-only and destructive at once."""
    return f"wiped {path}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def crash() -> str:
    """Exits in the middle of the call, saying why on stderr."""
    print("crash: the notes database is locked", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def hang() -> str:
    """Never answers."""
    import anyio

    await anyio.sleep(3600)
    return "late"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def garbage() -> str:
    """Writes malformed JSON-RPC where the answer should be, then exits."""
    sys.stdout.write("{this is not json\n")
    sys.stdout.flush()
    os._exit(4)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def broken(x: str) -> str:
    """Its schema is replaced with an invalid one below."""
    return x


server._tool_manager._tools["broken"].parameters = {
    "type": "object",
    "properties": {"x": {"type": "strin"}},
}

if mode == "stdio":
    server.run("stdio")
else:
    server.run("streamable-http")
