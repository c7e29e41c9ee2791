"""Nothing private is saved: the detector (``service.privacy``) against hostile inputs, one of
each kind of secret and disguised ones, against the quality bench's corpus (no false positive),
and ``<private>`` spans removed."""

from __future__ import annotations

import pytest
from mnemo.errors import SecretDetected
from mnemo.service import privacy

from bench import quality_set

# built from parts so that no complete credential sits in the repository's text
AWS_ID = "AKIA" + "Z7QW3RTY5UIOPASD"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HOSTILE = [
    (f"deploy uses {AWS_ID} for the bucket", "aws_access_key_id"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key"),
    (f"CI token {GH}", "github_token"),
    ("gitlab: glpat-" + "x7Yz9AbCdEfGhIjKlMnOp", "gitlab_token"),
    ("slack bot xoxb-" + "123456789012-abcdefABCDEF", "slack_token"),
    ("alerts go to https://hooks.slack.com/services/" + "T0001/B0002/abcdefghijklmnop", "slack_webhook"),
    ("stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    ("maps key AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "google_api_key"),
    ("use sk-ant-" + "api03-abcdefghijklmnopqrstuvwx", "openai_or_anthropic_key"),
    ("npm_" + "a" * 10 + "B" * 10 + "c1" * 8, "npm_token"),
    ("session eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "jwt"),
    ("-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA...", "private_key"),
    ("-----BEGIN OPENSSH " + "PRIVATE KEY-----", "private_key"),
    ("db is postgres://app:" + "S3cr3t-Pa55@db.internal:5432/app", "connection_string_password"),
    ("mongodb+srv://admin:" + "hunter2xyz@cluster0.mongodb.net", "connection_string_password"),
    ("set PASSWORD=" + "Tr0ub4dor&3x!", "high_entropy_assignment"),
    ('config {"api_key": "' + "9f8e7d6c5b4a3f2e1d0c" + '"}', "high_entropy_assignment"),
    ("curl -H 'Authorization: Bearer " + "abcDEF123456ghiJKL789mno" + "'", "bearer_token"),
]  # fmt: skip

ORDINARY = [
    "We chose Postgres over MySQL because of JSONB; the password policy needs 12 characters.",
    "The token budget for recall_context is 2000 tokens.",
    "Connection string format: postgres://user:<password>@host/db (password from ${DB_PASSWORD}).",
    "postgres://app:****@db.internal/app is the shape; the secret lives in the vault.",
    "Commit 4f2a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a fixed the API key rotation job.",
    "password: see 1Password item 'staging db'",
    "Use the Bearer scheme for API keys; rotate tokens every 90 days.",
    "sk- prefixes mark OpenAI keys; never paste them here.",
]


@pytest.mark.parametrize(("text", "kind"), HOSTILE, ids=[kind for _, kind in HOSTILE])
def test_each_kind_of_secret_is_refused_by_name_without_echoing_it(text, kind):
    with pytest.raises(SecretDetected) as refused:
        privacy.refuse_secrets([("content", f"Note: {text} (keep it)")])

    body = refused.value.body()
    assert body["code"] == "secret_detected"
    assert kind in body["message"]
    assert any(d["type"] == kind and d["loc"] == ["content"] for d in body["details"])
    secret = max(text.split(), key=len)
    assert secret[-10:] not in str(body)


@pytest.mark.parametrize("text", ORDINARY)
def test_notes_about_secrets_that_hold_none_pass(text):
    assert privacy.secret_kinds(text) == []


def test_no_memory_of_the_quality_corpus_is_refused():
    corpus = quality_set.load()["memories"]

    flagged = [m["id"] for m in corpus for field in (m["content"], m.get("path") or "", *m["tags"])
               if privacy.secret_kinds(field)]  # fmt: skip

    assert (len(corpus), flagged) == (2760, [])


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Deploy on Friday <private>the vault password is hunter2</private> after the freeze.",
         "Deploy on Friday  after the freeze."),
        ("Keep this. <PRIVATE>all of the rest, never closed", "Keep this."),
        ("<private>a</private>b<private>c</private>", "b"),
        ("no tags here", "no tags here"),
    ],
)  # fmt: skip
def test_private_spans_are_removed(text, kept):
    assert privacy.strip_private(text) == kept
