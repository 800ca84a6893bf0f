"""Write the gateway's OpenAPI document to gateway/openapi.json (committed; a test checks drift).

python -m hemra.gateway.export_openapi [PATH]
"""

import json
import sys
from pathlib import Path

from hemra.gateway.app import create_app

DOCUMENT = Path(__file__).parent / "openapi.json"


def document() -> str:
    return json.dumps(create_app(None).openapi(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> None:
    target = Path(argv[0]) if argv else DOCUMENT
    target.write_text(document())
    print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
