"""`--line MODEL[:k=v]`: the bench's USB-serial adapter model as mmrig run, the plugin and the sidecar take it
(mmhil.linemodel); the bench parses the same grammar (hil/bench/tests/test_uart_usb.c)."""

from __future__ import annotations

import pytest

from mmhil.linemodel import IDEAL, LineModel, LineModelError


def test_the_models_and_their_bench_spelling() -> None:
    assert LineModel.parse("ideal") == IDEAL and IDEAL.spec == "ideal"
    assert LineModel.parse("ftdi") == LineModel("ftdi", 16)
    assert LineModel.parse("ftdi").spec == "ftdi:latency=16"
    assert LineModel.parse("ftdi:latency=1").spec == "ftdi:latency=1"
    assert LineModel.parse("cdc-16u2").spec == "cdc-16u2"


def test_the_sidecar_names_each_models_parameters() -> None:
    assert IDEAL.params() == {"model": "ideal"}
    assert LineModel.parse("ftdi:latency=4").params() == {"model": "ftdi", "latency_timer_ms": 4,
                                                          "packet_data_bytes": 62, "frame_us": 1000.0}
    assert LineModel.parse("cdc-16u2").params() == {"model": "cdc-16u2", "flush_period_us": 4096.0,
                                                    "flush_above_bytes": 96, "frame_us": 1000.0}


@pytest.mark.parametrize("spec", ["ideal", "ftdi", "ftdi:latency=1", "cdc-16u2"])
def test_a_sidecars_parameters_name_the_model_again(spec: str) -> None:
    model = LineModel.parse(spec)
    assert LineModel.from_params(model.params()) == model
    assert LineModel.from_params(None) == IDEAL              # a run from before line models


@pytest.mark.parametrize("spec", ["", "usb", "FTDI", "ftdi:latency=0", "ftdi:latency=256", "ftdi:latency=",
                                  "ftdi:latency=-1", "ftdi:latency=1.5", "ftdi:timer=4", "cdc-16u2:latency=1",
                                  "ideal:x=1"])
def test_refused_with_the_reason(spec: str) -> None:
    with pytest.raises(LineModelError):
        LineModel.parse(spec)
