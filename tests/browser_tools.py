"""What the browser tests share: where Chromium is, how it is started here, and the vendored axe-core (its file,
its checksum, the WCAG 2.0/2.1 A and AA rules the course holds every page to, the call that runs them).

axe-core 4.14.1 (MPL-2.0) is vendored in tests/vendor/axe-core with its licence; the checksum is checked
wherever it is used, so a page is never judged by another file than the one this repository names.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

CHROMIUM = os.environ.get("SEQCOURSE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
# headless, as root, on a machine whose network is closed: no sandbox, no background connections
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"   # npm axe-core 4.14.1, axe.min.js
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# run in a page after axe's source: every violation with its nodes
AXE_RUN = """async (tags) => {
    const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
    return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                                  summary: n.failureSummary}))}));
}"""


def axe_source() -> str:
    """The vendored axe-core, after checking that it is the released file."""
    data = AXE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == AXE_SHA256, (
        f"{AXE} is not the file whose checksum the tests know (axe-core 4.14.1): see its README")
    return data.decode()
