"""Credentials stay out of the index: files named for them are skipped, and a private
key's body is blanked wherever it is committed (a config, a test's TLS fixture)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write_config, write_tree
from vq.core import store
from vq.indexer.extract_cache import without_private_keys

KEY = ("-----BEGIN RSA PRIVATE KEY-----\n"
       "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
       "7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPg\n"
       "-----END RSA PRIVATE KEY-----")


@pytest.mark.parametrize("text", [
    f'const tlsKey = `{KEY}`\n',
    '{"private_key": "' + KEY.replace("\n", "\\n") + '\\n"}\n',  # a service account's JSON
    KEY.replace("RSA ", "OPENSSH ") + "\n",
    KEY.replace("RSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK") + "\n",
])
def test_a_private_keys_body_is_blanked_and_its_lines_kept(text: str) -> None:
    out = without_private_keys(text)
    assert "MIIEow" not in out and "7onLRnrq" not in out
    assert out.count("\n") == text.count("\n")  # line numbers stay the file's
    assert "-----BEGIN" in out and "-----END" in out  # a reader sees a key was there


def test_text_without_a_key_is_untouched() -> None:
    text = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----\nPRIVATE KEY rule\n"
    assert without_private_keys(text) is text


@pytest.mark.model
def test_credentials_are_not_indexed_and_the_rest_of_the_file_is(tmp_path, build, cli) -> None:
    """go-plugin's and Jest's tests embed TLS keys: the test stays searchable, the key's
    body is in no chunk; ``credentials.json`` and ``secrets.yaml`` are not read."""
    from vq.core.settings import load_settings

    write_tree(tmp_path / "src", {
        "plugin_test.go": "package plugin\n\n// TestTLSHandshake dials the plugin over mutual"
                          " TLS.\nfunc TestTLSHandshake(t *testing.T) {\n"
                          f"\tkey := `{KEY}`\n\tdial(key)\n}}\n",
        "credentials.json": '{"client_secret": "s3cr3t-value", "token_uri": "https://x"}\n',
        "config/secrets.yaml": "api_token: s3cr3t-value\n",
        "client_secret_1234.apps.json": '{"installed": {"client_secret": "s3cr3t-value"}}\n',
    })
    cfg = write_config(tmp_path / "vq.yaml", {"index_dir": str(tmp_path / "index"),
                                              "vaults": {"src": {"path": str(tmp_path / "src"),
                                                                 "kind": "code"}}})
    settings = load_settings(str(cfg))
    summary = build(settings)
    assert summary.outcome == "ok" and summary.skipped["secret"] == 3
    assert "3 left out as credentials" in summary.line()
    rows = store.open_index(settings.index_dir).chunks.search().select(["path", "text"]) \
        .limit(None).to_arrow().to_pylist()
    assert {r["path"] for r in rows} == {"plugin_test.go"}
    assert not any("MIIEow" in r["text"] or "7onLRnrq" in r["text"] for r in rows)
    hits = json.loads(cli("--config", cfg, "search", "--json", "mutual TLS handshake").stdout)
    assert hits[0]["path"] == "plugin_test.go"
    everything = cli("--config", cfg, "search", "--json", "-n", "50", "s3cr3t-value MIIEow key")
    assert "s3cr3t" not in everything.stdout and "MIIEow" not in everything.stdout
