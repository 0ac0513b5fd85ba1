"""``egi-bench doctor`` compares versions by PEP 440 (``packaging``), not as text."""

from __future__ import annotations

import io

import pytest

from pytest_egi.doctor import check_litellm_version, in_release_series, run_doctor, same_version
from tests.toy_project import toy_suite_package

PKG = "versionsuites"  # unique package name: no clash with other tests' suite packages

BAD = ["1.82.7", "1.82.7.post1", "1.82.7.post2", "1.82.7rc1", "1.82.7.dev0", "1.82.7+cu121",
       "1.82.7.1", "v1.82.7", "1.82.07", "1.82.8", "1.82.8.post1", "1.107", "1.107.0", "1.107.0a1",
       "1.107.3.post1", "1.107.12"]  # fmt: skip
OK = ["1.110.2", "1.110.2.post1", "1.82.6", "1.82.6.post1", "1.82.70", "1.82.9", "1.108.0", "1.1070.0",
      "1.10.7", "1.17.0", "2.82.7", "1!1.82.7"]  # fmt: skip


@pytest.mark.parametrize("version", BAD)
def test_bad_litellm_series_caught_with_post_pre_and_local_builds(version):
    assert check_litellm_version(version) == (
        f"litellm {version} is on the known-bad list (1.82.7, 1.82.8, 1.107.x); install the pinned "
        "release: pip install 'litellm==1.110.2'"
    )


@pytest.mark.parametrize("version", OK)
def test_other_litellm_versions_pass(version):
    assert check_litellm_version(version) is None


def test_unparsable_litellm_version_is_a_problem():
    assert check_litellm_version("1.82.7-custom build") == (
        "litellm '1.82.7-custom build' is not a PEP 440 version and cannot be checked; install "
        "the pinned release: pip install 'litellm==1.110.2'"
    )


def test_release_series_and_pins():
    assert in_release_series("1.82.7.post1", "1.82.7") and not in_release_series("1.82.70", "1.82.7")
    assert in_release_series("1.107.4", "1.107.x") and not in_release_series("1.1070.0", "1.107.x")
    assert same_version("2.13.4", "2.13.4") and same_version("2.13.4.0", "2.13.4")
    assert not same_version("2.13.4.post1", "2.13.4") and not same_version("2.13.4+local", "2.13.4")
    assert same_version("weird", "weird") and not same_version("weird", "2.13.4")


@pytest.fixture
def project(tmp_path):
    """``<tmp>/routing.yaml`` and ``<tmp>/versionsuites/toy`` (the toy suite); cleans imports."""
    yield from toy_suite_package(tmp_path, PKG)


def test_doctor_fails_on_a_post_release_of_a_bad_litellm(project):
    out = io.StringIO()
    versions = {"litellm": "1.82.7.post1"}
    status = run_doctor(None, project, out=out,
                        package_version=lambda name: versions.get(name, "0+installed"))  # fmt: skip
    text = out.getvalue()
    assert status == 1, text
    assert ("  FAIL  litellm 1.82.7.post1 is on the known-bad list (1.82.7, 1.82.8, 1.107.x); install "
            "the pinned release: pip install 'litellm==1.110.2'") in text  # fmt: skip
