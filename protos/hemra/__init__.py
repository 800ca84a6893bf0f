"""HEMRA: the one top-level package (`hemra.v1` generated, `hemra.services`, `hemra.clients`,
`hemra.gateway`).

In a checkout this file sits at protos/hemra/ and the design's folders beside protos/, so the
checkout's root joins this package's path: `hemra.services` is services/ with nothing
installed (PYTHONPATH=.:protos). An installed wheel places them inside this folder already,
so there the path stays as it is.
"""

from pathlib import Path

_checkout = Path(__file__).resolve().parents[2]
if Path(__file__).resolve().parent.parent.name == "protos" and (_checkout / "services").is_dir():
    __path__.append(str(_checkout))
del Path, _checkout
