"""Checks /app/config/service.ini for hemra/edit-config. Exit 0 on success."""
import configparser
import sys

PATH = "/app/config/service.ini"
EXPECTED = {
    "server": {"host": "127.0.0.1", "port": "9090", "workers": "2"},
    "logging": {"level": "WARNING", "file": "/var/log/orders/service.log"},
    "features": {"beta_ui": "false", "export_csv": "true", "cache": "enabled"},
}


def main() -> int:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with open(PATH, encoding="utf-8") as fh:
            parser.read_file(fh)
    except (OSError, configparser.Error) as exc:
        print(f"cannot parse {PATH}: {exc}")
        return 1
    got = {s: dict(parser.items(s)) for s in parser.sections()}
    if got != EXPECTED:
        print(f"expected {EXPECTED}\ngot      {got}")
        return 1
    print("configuration is correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
