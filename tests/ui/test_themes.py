"""Shipped theme files load, cover every semantic colour, and bad files are reported by field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.app.monitor.themes import (
    SEMANTIC_DEFAULTS,
    ThemeFileError,
    load_theme_file,
    load_themes,
    themes_dir,
)


def test_shipped_themes_load_without_errors() -> None:
    loaded = load_themes()
    assert loaded.errors == ()
    names = {theme.name for theme in loaded.themes}
    assert {"bringup-dark", "bringup-light", "bringup-high-contrast"} <= names


def test_shipped_themes_set_every_semantic_colour() -> None:
    for theme in load_themes().themes:
        assert set(theme.variables) == set(SEMANTIC_DEFAULTS), theme.name


def test_themes_dir_is_the_checkout_folder_in_a_dev_install() -> None:
    found = themes_dir()
    assert found is not None
    assert (found / "dark.toml").is_file()


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('name = "x"\n[colors]\nprimary = "not-a-colour"\n', "colors.primary"),
        ('name = "x"\n[colors]\nprimary = "#123456"\n[variables]\nrank-reddy = "red"\n',
         "variables.rank-reddy"),
        ('name = "x"\n[colors]\nprimary = "#123456"\nshiny = "#000000"\n', "colors.shiny"),
        ('[colors]\nprimary = "#123456"\n', "'name'"),
        ('name = "x"\ncolour = 1\n', "'colour'"),
        ('name = "x"\n', "colors.primary"),
        ('name = "x"\ndark = "yes"\n[colors]\nprimary = "#123456"\n', "'dark'"),
        ('name = "x"\n[colors\n', "line"),
    ],
)  # fmt: skip
def test_a_bad_theme_file_names_the_file_and_the_field(
    tmp_path: Path, text: str, field: str
) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ThemeFileError) as caught:
        load_theme_file(path)
    assert str(path) in str(caught.value)
    assert field in str(caught.value)


def test_one_bad_file_does_not_hide_the_good_ones(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text('name = "good"\n[colors]\nprimary = "#336699"\n')
    (tmp_path / "bad.toml").write_bytes(b"\xff\xfe not toml")
    loaded = load_themes(tmp_path)
    assert [theme.name for theme in loaded.themes] == ["good"]
    assert len(loaded.errors) == 1
    assert "bad.toml" in loaded.errors[0]
