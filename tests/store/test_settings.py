"""Where the store finds its database: a URL, a URL in a secret file, a password in one."""

import pytest

from hemra.services.common.errors import InvalidArgument
from hemra.services.store.settings import StoreSettings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("HEMRA_DATABASE_URL", "HEMRA_DATABASE_URL_FILE", "HEMRA_DATABASE_PASSWORD_FILE", "HEMRA_BLOB_DIR"):
        monkeypatch.delenv(name, raising=False)


def test_default__a_sqlite_file_in_the_home(tmp_path):
    assert StoreSettings.from_env(home=tmp_path).database_url == f"sqlite:///{tmp_path / 'hemra.db'}"


def test_url_file__the_whole_url_from_a_secret_file(tmp_path, monkeypatch):
    secret = tmp_path / "url"
    secret.write_text("postgresql://hemra:s3cret@db.example:5432/hemra?sslmode=require\n")
    monkeypatch.setenv("HEMRA_DATABASE_URL_FILE", str(secret))
    assert StoreSettings.from_env(home=tmp_path).database_url == (
        "postgresql://hemra:s3cret@db.example:5432/hemra?sslmode=require"
    )
    monkeypatch.setenv("HEMRA_DATABASE_URL", "postgresql://other@h/x")  # the variable wins
    assert StoreSettings.from_env(home=tmp_path).database_url == "postgresql://other@h/x"


def test_password_file__added_to_a_url_without_one(tmp_path, monkeypatch):
    (tmp_path / "password").write_text("p@ss/word\n")
    monkeypatch.setenv("HEMRA_DATABASE_PASSWORD_FILE", str(tmp_path / "password"))
    monkeypatch.setenv("HEMRA_DATABASE_URL", "postgresql://hemra@db:5432/hemra?sslmode=disable")
    url = StoreSettings.from_env(home=tmp_path).database_url
    assert url == "postgresql://hemra:p%40ss%2Fword@db:5432/hemra?sslmode=disable"


@pytest.mark.parametrize("content, message", [(None, "cannot read it"), ("\n", "the file is empty")])
def test_url_file__unreadable_or_empty_is_one_clear_error(tmp_path, monkeypatch, content, message):
    secret = tmp_path / "url"
    if content is not None:
        secret.write_text(content)
    monkeypatch.setenv("HEMRA_DATABASE_URL_FILE", str(secret))
    with pytest.raises(InvalidArgument, match=f"^HEMRA_DATABASE_URL_FILE={secret}: {message}"):
        StoreSettings.from_env(home=tmp_path)
