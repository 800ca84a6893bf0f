"""The computer-use driver's pure parts: coordinates between the model's screen and the real
one, and what it takes for a PNG (services/executor/harnesses/computer_use.py)."""

import base64

import pytest

from hemra.services.executor.harnesses.computer_use import ActionError, Scale, _recent, png_size


def test_scale__model_points_land_on_the_real_screen_and_back():
    scale = Scale((1024, 640), (1280, 800))
    assert scale.to_screen(640, 336) == (800, 420)
    assert scale.to_screen(0, 0) == (0, 0)
    assert scale.to_screen(1023, 639) == (1279, 799)  # the last pixel stays on the screen
    assert scale.to_model(800, 420) == (640, 336)
    assert scale.to_model(1279, 799) == (1023, 639)
    same = Scale((1280, 800), (1280, 800))
    assert same.to_screen(17, 33) == (17, 33) and same.to_model(17, 33) == (17, 33)
    uneven = Scale((1024, 768), (1920, 1080))  # each axis scaled on its own
    assert uneven.to_screen(512, 384) == (960, 540)


@pytest.mark.parametrize("point", [(-1, 0), (1024, 0), (0, 640), ("1", 2), (True, 2), (None, 0)])
def test_scale__points_off_the_model_screen_are_the_model_s_error(point):
    with pytest.raises(ActionError):
        Scale((1024, 640), (1280, 800)).to_screen(*point)


def test_png_size__reads_the_header_and_refuses_what_is_not_a_png():
    dot = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
    )
    assert png_size(dot) == (1, 1)
    assert png_size(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    assert png_size(dot[:20]) is None


def test_recent__only_the_last_screenshots_travel_as_images():
    def result(n):
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": str(n)}}
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": [image]}]}

    messages = [{"role": "user", "content": "do it"}]
    for n in range(5):
        messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}"}]}, result(n)]
    kept = [
        part["source"]["data"]
        for m in _recent(messages)
        if isinstance(m["content"], list)
        for block in m["content"]
        for part in block.get("content") or []
        if part.get("type") == "image"
    ]
    assert kept == ["2", "3", "4"]
    assert messages[2]["content"][0]["content"][0]["type"] == "image"  # the history itself is kept whole
