"""The model gateway of an xdist run (``--egi-gateway auto``): one process that calls LiteLLM
for every local worker (:mod:`pytest_egi.models.gateway`). Registered as a plugin
(``egi-gateway``) only when started, it hands its socket to each worker and stops with the
session."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_egi.run.state import RunSettings

__all__ = ["GatewayPlugin", "start_model_gateway"]


class GatewayPlugin:
    """The started gateway, for the session: its socket reaches each local worker in
    ``workerinput["egi_gateway"]``; it stops at unconfigure."""

    def __init__(self, gateway: Any) -> None:
        self.gateway = gateway

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["egi_gateway"] = self.gateway.socket_path

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        gateway, self.gateway = self.gateway, None
        if gateway is not None:
            gateway.stop()


def start_model_gateway(config: pytest.Config, settings: RunSettings) -> None:
    """On an xdist controller whose run calls LiteLLM, start the model gateway that the
    workers will share (``--egi-gateway auto``); its socket reaches them in ``workerinput``.

    Only when some worker is a local process (``-n N``, ``--tx popen``): the gateway is a
    Unix socket of this host, so a worker on another one (``--tx ssh=...`` /
    ``--tx socket=...``) calls the provider itself
    (``pytest_egi.models.settings._gateway_here``)."""
    if getattr(config.option, "egi_gateway", "off") != "auto":
        return
    if not getattr(config.option, "tx", None) or getattr(config.option, "dist", "no") == "no":
        return  # not distributed (-n N, or --tx SPEC with -d / --dist, fill option.tx)
    from execnet import XSpec
    from xdist.workermanage import parse_tx_spec_config

    if not any(XSpec(spec).popen for spec in parse_tx_spec_config(config)):
        return
    from pytest_egi.models.offline import parse_offline_model

    provider = settings.provider
    models = [m for m in (settings.model, getattr(provider, "judge_model", None),
                          getattr(provider, "simulator_model", None))
              if m and parse_offline_model(m) is None]
    if not models:
        return
    from pytest_egi.models.gateway import start_gateway

    try:
        gateway = start_gateway()
    except RuntimeError as exc:
        raise pytest.UsageError(f"--egi-gateway auto: {exc}; rerun with --egi-gateway off") from None
    config.pluginmanager.register(GatewayPlugin(gateway), "egi-gateway")
