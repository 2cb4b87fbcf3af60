"""A scripted agent session against flameox-mcp, driven by the official MCP
Python SDK (the `mcp` package pinned in tools/requirements.txt).

capture -> failing analysis (a decoder limit set too low) -> reanalyze the
handle with a higher limit -> preserve -> read the bundle resource. Every
step's shape is asserted; the last line printed is a JSON summary. Run by
cmd/flameox-mcp's TestPythonSDKAgentSession:

    python agent_session.py FLAMEOX_MCP WORKLOAD_JS STORE
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def texts(result):
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


async def session(server, workload, store):
    # The SDK passes the server a minimal environment; these say where the
    # session's scratch goes and where the flameox commands are.
    env = {k: os.environ[k] for k in ("FLAMEOX_SCRATCH", "FLAMEOX_BIN_DIR", "FLAMEOX_HOME") if k in os.environ}
    params = StdioServerParameters(command=server, args=[], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            check("reanalyze" in (init.instructions or ""), "the instructions explain reanalyze")
            tools = await s.list_tools()
            names = {t.name for t in tools.tools}
            for n in ("capture_node_cpu_profile", "summarize_cpu_hotspots", "reanalyze", "preserve", "prepare_providers"):
                check(n in names, f"tools/list lacks {n}")

            # 1. capture, its analysis failing on a decoder limit set too low
            r = await s.call_tool("capture_node_cpu_profile", {
                "argv": ["node", workload], "analysis": {"limits": {"max_nodes": 1}, "top": 5}})
            check(r.is_error, "the analysis with max_nodes=1 must fail")
            f = r.structured_content["failure"]
            check(f["code"] == "LIMIT_EXCEEDED", f"failure code {f['code']}")
            check(f["details"]["limit"]["name"] == "max_nodes", "the failure names the limit")
            pe = f["details"]["partial_evidence"]
            check(pe["capture"]["outcome"] == "completed", "the completed capture is partial evidence")
            check(any(a["role"] == "cpu-profile" for a in pe["artifacts"]), "the profile is partial evidence")
            handle = f["details"]["handle"]
            check(r.structured_content["handle"]["id"] == handle, "the handle is in the result")
            check(f["retry"]["tool"] == "reanalyze", "the retry names reanalyze")
            check(any("LIMIT_EXCEEDED" in t for t in texts(r)), "the failure line is text content")

            # 2. reanalyze the handle with a higher limit
            r = await s.call_tool("reanalyze", {"handle": handle,
                                                "analysis": {"limits": {"max_nodes": 10000000}, "top": 5}})
            check(not r.is_error, f"reanalyze failed: {r.structured_content.get('failure')}")
            table = r.structured_content["tables"][0]
            cols = table["columns"]
            rows = [dict(zip(cols, row)) for row in table["rows"]]
            check(len(rows) == 5 and rows[0]["function"] == "hotLoop", f"rows {rows[:1]}")
            check(table["summary"]["rows_emitted"] == 5, "summary counts the rows")
            text = "\n".join(texts(r))
            check("hotLoop" in text and len(text) < 4096, "compact text names hotLoop")

            # 3. preserve the handle
            r = await s.call_tool("preserve", {"handle": handle, "store": store})
            check(not r.is_error, f"preserve failed: {r.structured_content.get('failure')}")
            bundle = r.structured_content["bundles"][0]
            links = [c for c in r.content if getattr(c, "type", None) == "resource_link"]
            check(links and str(links[0].uri) == bundle["uri"], "preserve links the resource")

            # 4. read the resource
            listed = await s.list_resources()
            check(bundle["uri"] in [str(x.uri) for x in listed.resources], "resources/list has the bundle")
            res = await s.read_resource(bundle["uri"])
            proj = json.loads(res.contents[0].text)
            check(proj["bundle_id"] == bundle["bundle_id"], "the resource is the bundle")
            check(proj["captures"][0]["outcome"] == "completed", "the capture outcome")
            check(proj["limit_receipts"][0]["limit"]["name"] == "max_nodes", "the limit receipt")
            check(all("path" not in a for a in proj["artifacts"]), "no paths in the resource")
            check(workload not in res.contents[0].text and store not in res.contents[0].text, "no host paths")
            return {"handle": handle, "bundle": bundle["bundle_id"], "rows": len(rows),
                    "resource_bytes": len(res.contents[0].text)}


def main():
    server, workload, store = sys.argv[1:4]
    summary = asyncio.run(session(server, workload, store))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
