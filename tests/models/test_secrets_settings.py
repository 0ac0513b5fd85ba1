"""Secrets (redaction, .env) and the provider options/settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_egi.models.secrets import (
    find_secret_leaks,
    is_secret_name,
    load_env_file,
    parse_env_file,
    present_provider_keys,
    redact,
    redact_obj,
    secret_values,
)
from pytest_egi.models.settings import (
    DEFAULT_CACHE_SUBDIR,
    load_price_file,
    settings_from_config,
)


def test_secret_names():
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "MY_SECRET", "DB_PASSWORD",
                 "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "AZURE_OPENAI_KEY"):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "OPENAI_API_BASE", "MONKEY", "PYTHONHASHSEED", "TOKENIZERS"):
        assert not is_secret_name(name), name


def test_redact_env_values_key_shapes_bearer_and_url_passwords():
    env = {"OPENAI_API_KEY": "sk-abcdefghijklmnop1234", "ACME_TOKEN": "plainvalue-123",
           "SHORT_TOKEN": "1", "HOME": "/root/home-dir-path"}
    text = ("key sk-abcdefghijklmnop1234 token plainvalue-123 home /root/home-dir-path "
            "other sk-proj-ZZZZZZZZZZZZZZZZZZZZ hf_abcdefghijklmnopqrstu AKIAABCDEFGHIJKLMNOP "
            "Authorization: Bearer abc.def-ghi123 url https://user:hunter2pass@host/v1 "
            'api_key="q1w2e3r4t5y6" n=1')
    out = redact(text, env)
    for secret in ("sk-abcdefghijklmnop1234", "plainvalue-123", "sk-proj-ZZZZ", "hf_abcdef",
                   "AKIAABCDEFGHIJKLMNOP", "abc.def-ghi123", "hunter2pass", "q1w2e3r4t5y6"):
        assert secret not in out, secret
    assert "/root/home-dir-path" in out and "n=1" in out  # not secrets
    assert "Bearer ***" in out and "https://user:***@host/v1" in out
    assert redact("nothing to see", env) == "nothing to see"
    nested = redact_obj({"msg": ["plainvalue-123", 3, None], "plainvalue-123": "k"}, env)
    assert nested == {"msg": ["***", 3, None], "***": "k"}


def test_env_file_parsing_and_loading_never_overrides(tmp_path, monkeypatch):
    env_file = tmp_path / ".env"
    env_file.write_text(
        "# provider keys\n"
        "export EGI_T_API_KEY=from-file-123\n"
        "EGI_T_QUOTED=\"two words # not a comment\\nline2\"\n"
        "EGI_T_SINGLE='raw\\n'\n"
        "EGI_T_PLAIN = value  # trailing comment\n"
        "\n"
        "EGI_T_EXISTING=from-file\n"
    )
    parsed = parse_env_file(env_file)
    assert parsed == {"EGI_T_API_KEY": "from-file-123",
                      "EGI_T_QUOTED": "two words # not a comment\nline2",
                      "EGI_T_SINGLE": "raw\\n", "EGI_T_PLAIN": "value",
                      "EGI_T_EXISTING": "from-file"}
    for k in parsed:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("EGI_T_EXISTING", "from-env")
    loaded = load_env_file(env_file)
    assert loaded == ["EGI_T_API_KEY", "EGI_T_PLAIN", "EGI_T_QUOTED", "EGI_T_SINGLE"]
    assert os.environ["EGI_T_EXISTING"] == "from-env"
    assert os.environ["EGI_T_API_KEY"] == "from-file-123"
    assert "EGI_T_API_KEY" in present_provider_keys()
    bad = tmp_path / "bad.env"
    bad.write_text("GOOD=1\nsk-this-line-is-a-secret-without-a-name\n")
    with pytest.raises(ValueError, match=r"bad.env:2: expected KEY=VALUE") as info:
        parse_env_file(bad)
    assert "sk-this" not in str(info.value)


def test_present_provider_keys_are_names_only():
    env = {"OPENAI_API_KEY": "sk-x", "HF_TOKEN": "hf", "CUSTOM_API_KEY": "c", "EMPTY_API_KEY": "",
           "PATH": "/bin"}
    assert present_provider_keys(env) == ["CUSTOM_API_KEY", "HF_TOKEN", "OPENAI_API_KEY"]


def test_find_secret_leaks(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "t.json").write_text(json.dumps({"m": "has sk-LEAKED-0123456789"}))
    (tmp_path / "egi.json").write_text("{}")
    assert find_secret_leaks(tmp_path, ["sk-LEAKED-0123456789"]) == [tmp_path / "raw" / "t.json"]
    assert find_secret_leaks(tmp_path, ["absent-secret"]) == []


def test_price_file_json_yaml_and_errors(tmp_path):
    good = tmp_path / "p.yaml"
    good.write_text("my/model: {input_cost_per_token: 1e-6, output_cost_per_token: 2e-6}\n")
    assert load_price_file(good) == {"my/model": {"input_cost_per_token": 1e-6,
                                                  "output_cost_per_token": 2e-6}}
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"m": {"input_cost_per_token": 1}}))
    with pytest.raises(ValueError, match="m: needs numeric input_cost_per_token"):
        load_price_file(bad)


def test_settings_from_command_line(pytester, monkeypatch):
    monkeypatch.delenv("EGI_DOTENV_TOKEN", raising=False)
    pytester.makefile("", **{".env": "EGI_DOTENV_TOKEN=loaded-from-dotenv\n"})
    prices = pytester.makefile(".json", prices=json.dumps(
        {"m": {"input_cost_per_token": 0, "output_cost_per_token": 0}}))
    config = pytester.parseconfig(
        "--egi-rpm", "90", "--egi-tpm", "50000", "--egi-timeout", "2.5", "--egi-max-retries", "0",
        "--egi-cache", "mycache", "--egi-price-file", str(prices),
        "--egi-judge-model", "openai/judge", "--egi-simulator-model", "egi/rules",
        "--egi-judge-api-base", "http://127.0.0.1:9/v1/")
    s = settings_from_config(config)
    assert (s.rpm, s.tpm, s.timeout_s, s.max_retries) == (90, 50000, 2.5, 0)
    assert s.cache_dir == Path(config.invocation_params.dir) / "mycache"
    assert s.state_dir == Path(config.rootpath) / ".egi_cache"
    assert s.price_file == prices and s.env_file == Path(config.rootpath) / ".env"
    assert (s.judge_model, s.judge_api_base) == ("openai/judge", "http://127.0.0.1:9/v1")
    assert s.simulator_model is None and s.simulator_identity() == "egi/rules"
    assert os.environ["EGI_DOTENV_TOKEN"] == "loaded-from-dotenv"
    defaults = settings_from_config(pytester.parseconfig())
    assert defaults.cache_dir == Path(config.rootpath) / DEFAULT_CACHE_SUBDIR
    assert (defaults.rpm, defaults.timeout_s, defaults.max_retries) == (None, 120.0, 6)
    assert settings_from_config(pytester.parseconfig("--egi-no-cache")).cache_dir is None


@pytest.mark.parametrize("args, message", [
    (["--egi-rpm", "0"], "--egi-rpm: expected a positive integer, got '0'"),
    (["--egi-tpm", "lots"], "--egi-tpm: expected a positive integer, got 'lots'"),
    (["--egi-timeout", "-1"], "--egi-timeout: expected a number of seconds > 0"),
    (["--egi-max-retries", "x"], "--egi-max-retries: expected an integer >= 0"),
    (["--egi-judge-model", "egi/oracle"], "--egi-judge-model: 'egi/oracle' is not a judge"),
    (["--egi-judge-api-base", "localhost:8000"], "--egi-judge-api-base: expected an http(s) URL"),
])
def test_bad_option_values_are_usage_errors(pytester, args, message):
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_missing_env_or_price_file_is_a_usage_error(pytester):
    with pytest.raises(pytest.UsageError, match="--egi-env-file: no such file"):
        settings_from_config(pytester.parseconfig("--egi-env-file", "nope.env"))
    with pytest.raises(pytest.UsageError, match="--egi-price-file: cannot read price file"):
        settings_from_config(pytester.parseconfig("--egi-price-file", "nope.json"))


def test_redact_rebuilds_list_subclasses_as_plain_lists():
    class Calls(list):
        def __init__(self):  # takes no iterable, as a suite's own list type may not
            super().__init__()

    calls = Calls()
    calls.append({"token": "plainvalue-123"})
    out = redact_obj({"calls": calls, "pair": ("plainvalue-123", 1)}, {"ACME_TOKEN": "plainvalue-123"})
    assert type(out["calls"]) is list and type(out["pair"]) is tuple
    assert "plainvalue-123" not in repr(out)


def test_secret_values_follow_changes_to_the_environment(monkeypatch):
    monkeypatch.delenv("EGI_TEST_SERVICE_TOKEN", raising=False)
    assert "tok-0123456789" not in secret_values()
    monkeypatch.setenv("EGI_TEST_SERVICE_TOKEN", "tok-0123456789")
    assert "tok-0123456789" in secret_values()
    assert redact_obj({"a": ["x tok-0123456789 y", "tok-0123456789"]}) == {"a": ["x *** y", "***"]}
    monkeypatch.setenv("EGI_TEST_SERVICE_TOKEN", "tok-9876543210")
    assert "tok-0123456789" not in secret_values()
    assert "tok-9876543210" in secret_values()
    monkeypatch.delenv("EGI_TEST_SERVICE_TOKEN")
    assert "tok-9876543210" not in secret_values()


def test_short_strings_keep_only_the_environment_values_check(monkeypatch):
    monkeypatch.setenv("EGI_TEST_PASSWORD", "hunter2")
    assert redact("hunter2") == "***"
    assert redact("a://u:p@h") == "a://u:***@h"
    assert redact("a://u:p@") == "a://u:***@"
