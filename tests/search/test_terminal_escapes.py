"""Issue 17, item 8: names and text from a vault never drive the terminal.

On main a file named ``esc\\x1b[2J….md`` cleared the screen of whoever ran
`vq build`, `vq status` or `vq search`. Every human-readable line now shows such
characters as escapes; JSON stays exact (json.dumps escapes them itself).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import write_config
from vq.core.display import shown, shown_lines

CLEAR = "\x1b[2J"
NAME = f"esc{CLEAR}notes.md"
BIDI = "gnp.\u202etxt.md"


@pytest.mark.parametrize(("raw", "safe"), [
    (f"esc{CLEAR}.md", "esc\\x1b[2J.md"),
    ("title\x1b]0;pwned\x07", "title\\x1b]0;pwned\\x07"),
    ("csi\x9b31m", "csi\\x9b31m"),
    (BIDI, "gnp.\\u202etxt.md"),
    ("tab\tnew\nline\r", "tab\\tnew\\nline\\r"),
    ("caf\udce9.md", "caf\\xe9.md"),
    ("café ☕ 日本.md", "café ☕ 日本.md"),
])
def test_shown_escapes_controls_and_keeps_printable_text(raw, safe):
    assert shown(raw) == safe
    assert shown_lines("a\nb\x1b") == "a\nb\\x1b"


@pytest.mark.model
def test_no_command_prints_a_raw_escape_from_a_vault(tmp_path, cli):
    root = tmp_path / "hostile"
    root.mkdir()
    (root / NAME).write_text("# Loaf \x1b]0;pwned\x07 recipe\n\nKnead the bread dough "
                             "\x1b[31mred\x1b[0m until smooth.\n")
    (root / BIDI).write_text("# Reversed\n\nbread crumbs\n")
    (root / f"gone{CLEAR}.md").symlink_to(tmp_path / "nowhere.md")  # a reported problem
    cfg = write_config(tmp_path / "c.yaml", {"index_dir": str(tmp_path / "index"),
                                             "vaults": {"h": {"path": str(root)}}})
    outputs = {}
    built = cli("--config", cfg, "build")
    assert built.exit_code == 0, built.stderr
    outputs["build"] = built.stderr
    (root / NAME).write_text("# Loaf\n\nchanged bread\n")
    for name, args in {"status": ("status",), "check": ("status", "--check"),
                       "search": ("search", "--method", "lexical", "--explain", "bread"),
                       "doctor": ("doctor", "--no-model"), "vaults": ("vault", "list")
                       }.items():
        result = cli("--config", cfg, *args)
        outputs[name] = result.stdout + result.stderr
    for name, text in outputs.items():
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text, name
    assert "gone\\x1b[2J.md" in outputs["build"] and "gone\\x1b[2J.md" in outputs["status"]
    assert "esc\\x1b[2Jnotes.md" in outputs["check"] and "\\u202e" in outputs["search"]
    assert "\\x1b[31mred" in outputs["search"]
    hits = json.loads(cli("--config", cfg, "search", "--json", "--method", "lexical",
                          "bread").stdout)
    assert NAME in {h["path"] for h in hits}  # JSON keeps the exact name
