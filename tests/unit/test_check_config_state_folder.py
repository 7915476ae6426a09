"""check-config says when the start could not make the state folder (the start said "the state folder ... could
not be made (Not a directory)" and exited, while check-config said "no warnings"); it makes nothing itself."""
from __future__ import annotations


def _check(tmp_path, capsys, state_path) -> tuple:
    from hippocampus.__main__ import main

    path = tmp_path / "h.yaml"
    path.write_text(f'sleep:\n  state_path: "{state_path}"\nmodel:\n  url: ""\n', encoding="utf-8")
    code = main(["check-config", "--offline", "--config", str(path)])
    return code, [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("warning:")]


def test_a_state_folder_under_a_file_is_a_warning(tmp_path, capsys):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    folder = tmp_path / "afile" / "state"
    code, warnings = _check(tmp_path, capsys, folder / "state.json")
    assert code == 1 and warnings == [
        f"warning: the service refuses to start: the state folder {folder} could not be made ({tmp_path / 'afile'} "
        "is not a folder): make it by hand, writable by this account, or set sleep.state_path to a folder it can "
        "write"]


def test_a_state_folder_that_can_be_made_is_no_warning_and_is_not_made(tmp_path, capsys):
    folder = tmp_path / "new" / "state"
    code, warnings = _check(tmp_path, capsys, folder / "state.json")
    assert (code, warnings) == (0, []) and not (tmp_path / "new").exists()
