"""Drives `hearth acp` with the official Python ACP SDK (PyPI `agent-client-protocol`).

Usage: python acp_agent_client.py MODE WORKDIR HEARTH [ARGS...]

MODE is one of:
  prompt               initialize, session/new, one prompt; prints what streamed
  cancel               a prompt cancelled after its first chunk
  load SESSION         session/load of SESSION (or why it failed), then session/list
  permission ANSWER    a prompt whose staged proposal is answered with ANSWER
                       (approve | reject | disconnect)
  mcp PYTHON SCRIPT    a session given the stdio MCP server `notes` (PYTHON SCRIPT
                       stdio) and one prompt, then a session without it and one prompt
  files DECLARED       one prompt; with DECLARED `yes` the client declares fs.readTextFile
                       and answers every read with the buffer "editor buffer text"

Prints one JSON object on stdout: what the agent said, for the Rust test to assert on.
"""

import asyncio
import json
import os
import sys

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.transports import default_environment
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    McpServerStdio,
    ReadTextFileResponse,
    RequestPermissionResponse,
)


def dump(value):
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


class Recorder:
    """An editor that writes down every update and answers permission questions."""

    def __init__(self, answer=None):
        self.updates = []
        self.questions = []
        self.answer = answer
        self.first_chunk = asyncio.Event()
        # The buffer every fs/read_text_file gets, when the client offers reads.
        self.buffer = None
        self.reads = []

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(dump(update))
        if dump(update).get("sessionUpdate") == "agent_message_chunk":
            self.first_chunk.set()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.questions.append(
            {"toolCall": dump(tool_call), "options": [dump(o) for o in options]}
        )
        if self.answer == "disconnect":
            # An editor that goes away instead of answering.
            print(json.dumps({"questions": self.questions}), flush=True)
            os._exit(0)
        # The first option of the kind asked for: allow_* to approve, reject_* to reject.
        wanted = "allow" if self.answer == "approve" else "reject"
        option = next(o for o in options if dump(o)["kind"].startswith(wanted))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=dump(option)["optionId"])
        )

    async def read_text_file(self, session_id, path, **kwargs):
        if self.buffer is None:
            raise RuntimeError("not offered")
        self.reads.append(path)
        return ReadTextFileResponse(content=self.buffer)

    async def write_text_file(self, session_id, path, content, **kwargs):
        raise RuntimeError("not offered")


async def start(conn, reads=False):
    return await conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=reads, write_text_file=False),
            terminal=False,
        ),
        client_info=Implementation(name="hearth-python-test", version="0"),
    )


async def main():
    mode, workdir, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    argument = None
    if mode in ("load", "permission", "files"):
        argument, command = command[0], command[1:]
    if mode == "mcp":
        argument, command = command[:2], command[2:]
    recorder = Recorder(answer=argument if mode == "permission" else None)
    reads = mode == "files" and argument == "yes"
    if reads:
        recorder.buffer = "editor buffer text"
    result = {}
    env = None
    if "HEARTH_TOKEN" in os.environ:
        # As an editor's agent settings give the agent its variables.
        env = {**default_environment(), "HEARTH_TOKEN": os.environ["HEARTH_TOKEN"]}
    async with spawn_agent_process(
        lambda _agent: recorder, command[0], *command[1:], env=env, cwd=workdir
    ) as (conn, _process):
        init = await asyncio.wait_for(start(conn, reads), 30)
        result["initialize"] = dump(init)
        if mode == "load":
            try:
                loaded = await asyncio.wait_for(
                    conn.load_session(cwd=workdir, session_id=argument), 30
                )
                result["load"] = dump(loaded)
            except Exception as error:
                # A session the agent will not load (another user's, say).
                result["loadError"] = str(error)
            result["replayed"] = list(recorder.updates)
            listed = await asyncio.wait_for(conn.list_sessions(), 30)
            result["list"] = dump(listed)
        elif mode == "mcp":
            notes = McpServerStdio(
                name="notes", command=argument[0], args=[argument[1], "stdio"], env=[]
            )
            for key, servers in (("withServer", [notes]), ("withoutServer", [])):
                session = await asyncio.wait_for(
                    conn.new_session(cwd=workdir, mcp_servers=servers), 30
                )
                response = await asyncio.wait_for(
                    conn.prompt(
                        session_id=session.session_id,
                        prompt=[text_block("look it up")],
                    ),
                    60,
                )
                result[key] = {
                    "session": dump(session),
                    "prompt": dump(response),
                    "updates": list(recorder.updates),
                    "questions": list(recorder.questions),
                }
                recorder.updates.clear()
        else:
            session = await asyncio.wait_for(conn.new_session(cwd=workdir), 30)
            result["session"] = dump(session)
            prompt = asyncio.ensure_future(
                conn.prompt(
                    session_id=session.session_id,
                    prompt=[text_block("hello from python")],
                )
            )
            if mode == "cancel":
                await asyncio.wait_for(recorder.first_chunk.wait(), 30)
                await conn.cancel(session_id=session.session_id)
            response = await asyncio.wait_for(prompt, 60)
            result["prompt"] = dump(response)
            result["updates"] = recorder.updates
            result["questions"] = recorder.questions
            result["reads"] = recorder.reads
            if mode == "prompt":
                chosen = await asyncio.wait_for(
                    conn.set_config_option(
                        config_id="model", session_id=session.session_id, value="other-model"
                    ),
                    30,
                )
                result["setModel"] = dump(chosen)
                try:
                    await conn.set_config_option(
                        config_id="mood", session_id=session.session_id, value="happy"
                    )
                    result["setUnknown"] = "accepted"
                except Exception as error:
                    result["setUnknown"] = str(error)
    print(json.dumps(result), flush=True)


asyncio.run(main())
