"""The page names a diagram by the same sha256 as the server (frontend/src/diagram.js against
labeling/diagrams/blocks.py), for every MATH-500 diagram and for code outside ASCII."""
import json
import shutil
import subprocess

from labeling.diagrams.blocks import asy_blocks, diagram_hash
from tests.conftest import ROOT

HASH_IN_NODE = """
import { readFileSync } from "node:fs";
import { diagramHash } from "./src/diagram.js";
const codes = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(codes.map(diagramHash)));
"""


def test_the_page_and_the_server_hash_a_diagram_alike(asy_problems):
    node = shutil.which("node")
    assert node, "node is not installed: the frontend's tests need Node 20.19 or later"
    codes = [code for r in asy_problems for code in asy_blocks(r["problem"])]
    codes += ['label("é ∑ 😀", (0,0));', "draw((0,0)--(1,1));\r\n", "\t \\$ \\\\ \"quoted\"\n"]
    done = subprocess.run([node, "--input-type=module", "-e", HASH_IN_NODE], cwd=ROOT / "frontend",
                          input=json.dumps(codes), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [diagram_hash(code) for code in codes]
    assert len(codes) == 45
