"""hemra.services.domain.dockerfile.parse: what a host sandbox must set up, and what it cannot."""

import pytest

from hemra.services.domain.dockerfile import Copy, DockerfileError, parse


def _copies(plan):
    return [(c.source, c.destination) for c in plan.copies]


# --- WORKDIR ---------------------------------------------------------------


def test_workdir__absolute():
    plan = parse("FROM ubuntu:24.04\nWORKDIR /app\n")
    assert plan.workdir == "/app"
    assert plan.base_image == "ubuntu:24.04"
    assert plan.host_unsupported == []


def test_workdir__relative_joins_previous():
    plan = parse("FROM x\nWORKDIR /app\nWORKDIR src\nWORKDIR ../lib/./inner\n")
    assert plan.workdir == "/app/lib/inner"


def test_workdir__default_when_absent():
    assert parse("FROM x\n").workdir == "/"
    assert parse("FROM x\n", workdir_default="/srv").workdir == "/srv"


def test_workdir__expands_env():
    plan = parse("FROM x\nENV ROOT=/opt/work\nWORKDIR ${ROOT}/sub\n")
    assert plan.workdir == "/opt/work/sub"


# --- ENV -------------------------------------------------------------------


def test_env__key_value_pairs():
    plan = parse('FROM x\nENV A=1 B="two words" C=\n')
    assert plan.env == {"A": "1", "B": "two words", "C": ""}


def test_env__legacy_space_form_keeps_rest_of_line():
    plan = parse("FROM x\nENV GREETING hello big world\n")
    assert plan.env == {"GREETING": "hello big world"}


def test_env__legacy_form_value_may_hold_equals():
    plan = parse("FROM x\nENV OPTS a=b c=d\n")
    assert plan.env == {"OPTS": "a=b c=d"}


def test_env__references_earlier_env():
    plan = parse("FROM x\nENV A=/base\nENV B=$A/bin C=${A}/lib\n")
    assert plan.env["B"] == "/base/bin"
    assert plan.env["C"] == "/base/lib"


def test_env__pair_without_value_raises():
    with pytest.raises(DockerfileError, match="line 2"):
        parse("FROM x\nENV A=1 B\n")


def test_env__legacy_form_strips_quotes():
    plan = parse('FROM x\nENV A "hello world"\n')
    assert plan.env == {"A": "hello world"}


# --- ARG -------------------------------------------------------------------


def test_arg__substituted_into_later_lines():
    plan = parse(
        "FROM x\nARG DIR=/work\nARG NAME=data\nWORKDIR $DIR\nENV FILE=${DIR}/${NAME}.txt\nCOPY ${NAME}.txt ${DIR}/\n"
    )
    assert plan.workdir == "/work"
    assert plan.env == {"FILE": "/work/data.txt"}
    assert _copies(plan) == [("data.txt", "/work/")]


def test_arg__quoted_default_and_fallback_syntax():
    plan = parse('FROM x\nARG V="1.2"\nARG EMPTY\nENV A=$V B=x${EMPTY}y C=${MISSING:-dflt} D=${V:-unused}\n')
    assert plan.env == {"A": "1.2", "B": "xy", "C": "dflt", "D": "1.2"}


def test_arg__without_default_is_unset_for_fallback():
    plan = parse("FROM x\nARG NAME\nENV A=${NAME:-fallback}\n")
    assert plan.env == {"A": "fallback"}


def test_arg__env_wins_over_arg_of_same_name():
    plan = parse("FROM x\nARG P=from-arg\nENV P=from-env\nENV Q=$P\n")
    assert plan.env["Q"] == "from-env"


def test_arg__not_expanded_in_lines_before_it():
    plan = parse("FROM x\nENV A=$LATER\nARG LATER=value\n")
    assert plan.env["A"] == ""


# --- COPY / ADD of local files --------------------------------------------


def test_copy__file_into_folder_with_trailing_slash():
    plan = parse("FROM x\nCOPY data.txt /app/\n")
    assert plan.copies == [Copy("data.txt", "/app/", 2)]


def test_copy__file_to_file_keeps_no_slash():
    plan = parse("FROM x\nCOPY data.txt /app/input.txt\n")
    assert _copies(plan) == [("data.txt", "/app/input.txt")]


def test_copy__folder_contents():
    plan = parse("FROM x\nCOPY files/ /srv/files/\nCOPY . /code/\n")
    assert _copies(plan) == [("files/", "/srv/files/"), (".", "/code/")]


def test_copy__relative_destination_against_workdir():
    plan = parse("FROM x\nWORKDIR /app\nCOPY a.txt ./\nCOPY b.txt sub/\nCOPY c.txt ../top/c.txt\n")
    assert _copies(plan) == [("a.txt", "/app/"), ("b.txt", "/app/sub/"), ("c.txt", "/top/c.txt")]


def test_copy__relative_destination_uses_workdir_at_that_line():
    plan = parse("FROM x\nCOPY a.txt dest/\nWORKDIR /later\n")
    assert _copies(plan) == [("a.txt", "/dest/")]


def test_copy__json_array_form():
    plan = parse('FROM x\nCOPY ["my file.txt", "other.txt", "/app/"]\n')
    assert _copies(plan) == [("my file.txt", "/app/"), ("other.txt", "/app/")]


def test_copy__chown_and_chmod_flags_accepted():
    plan = parse("FROM x\nCOPY --chown=1000:1000 --chmod=755 run.sh /app/\n")
    assert _copies(plan) == [("run.sh", "/app/")]
    assert plan.host_unsupported == []


def test_copy__chown_flag_with_json_array_form():
    plan = parse('FROM x\nCOPY --chown=1000:1000 ["a.txt", "/app/"]\n')
    assert _copies(plan) == [("a.txt", "/app/")]


def test_copy__add_of_local_file_is_a_copy():
    plan = parse("FROM x\nADD notes.md /app/\n")
    assert plan.copies == [Copy("notes.md", "/app/", 2)]
    assert plan.host_unsupported == []


def test_copy__several_sources_need_folder_destination():
    with pytest.raises(DockerfileError, match="line 2.*ending in /"):
        parse("FROM x\nCOPY a.txt b.txt /app\n")


def test_copy__without_destination_raises():
    with pytest.raises(DockerfileError, match="line 3: COPY needs a source and a destination"):
        parse("FROM x\nWORKDIR /app\nCOPY onlysource\n")


@pytest.mark.parametrize("source", ["../secret", "/etc/passwd", "a/../../b", "./../x"])
def test_copy__source_outside_context_raises(source):
    with pytest.raises(DockerfileError, match=r"line 2: COPY source .* outside the build context"):
        parse(f"FROM x\nCOPY {source} /app/\n")


# --- continuations and comments -------------------------------------------


def test_continuation__lines_joined_and_numbered_from_first():
    text = "FROM x\nENV A=1 \\\n    B=2 \\\n    C=3\nRUN apt-get update && \\\n    apt-get install -y curl\n"
    plan = parse(text)
    assert plan.env == {"A": "1", "B": "2", "C": "3"}
    assert len(plan.host_unsupported) == 1
    assert plan.host_unsupported[0].startswith("line 5: RUN apt-get update")


def test_continuation__comments_inside_are_skipped():
    text = "FROM x\nCOPY a.txt \\\n# a comment inside\n    /app/\n"
    assert _copies(parse(text)) == [("a.txt", "/app/")]


def test_comments__and_blank_lines_ignored_but_counted():
    text = "# syntax=docker/dockerfile:1\n\nFROM x\n   # indented comment\n\nRUN make\n"
    plan = parse(text)
    assert plan.base_image == "x"
    assert plan.host_unsupported == ["line 6: RUN make: the host cannot run build steps"]


def test_keywords__case_insensitive_and_metadata_ignored():
    text = 'from x\nworkdir /w\nLABEL a=b\nEXPOSE 80\nCMD ["sh"]\nENTRYPOINT ["x"]\nHEALTHCHECK NONE\n'
    plan = parse(text)
    assert plan.workdir == "/w"
    assert plan.host_unsupported == []


# --- host_unsupported -------------------------------------------------------


def test_unsupported__run_names_line():
    plan = parse("FROM x\nWORKDIR /app\nRUN pip install numpy\n")
    assert plan.host_unsupported == ["line 3: RUN pip install numpy: the host cannot run build steps"]


def test_unsupported__long_run_is_shortened():
    plan = parse("FROM x\nRUN " + "a" * 200 + "\n")
    assert plan.host_unsupported[0].startswith("line 2: RUN ")
    assert "..." in plan.host_unsupported[0]
    assert len(plan.host_unsupported[0]) < 150


def test_unsupported__user_nonroot():
    plan = parse("FROM x\nUSER app\n")
    assert plan.host_unsupported == ["line 2: USER app: the host sandbox runs as one user"]


@pytest.mark.parametrize("user", ["root", "0", "root:root", "0:0"])
def test_unsupported__user_root_is_fine(user):
    assert parse(f"FROM x\nUSER {user}\n").host_unsupported == []


def test_unsupported__copy_from_other_stage():
    plan = parse("FROM x\nCOPY --from=builder /out/bin /app/\n")
    assert plan.copies == []
    assert len(plan.host_unsupported) == 1
    assert plan.host_unsupported[0].startswith("line 2: COPY --from=builder")
    assert "another image" in plan.host_unsupported[0]


def test_unsupported__add_of_url():
    plan = parse("FROM x\n\nADD https://example.com/data.csv /app/\n")
    assert plan.copies == []
    assert plan.host_unsupported == ["line 3: ADD https://example.com/data.csv: URLs and archives need a container"]


@pytest.mark.parametrize("archive", ["data.tar.gz", "data.tgz", "data.tar", "data.tar.xz"])
def test_unsupported__add_of_archive(archive):
    plan = parse(f"FROM x\nADD {archive} /app/\n")
    assert plan.copies == []
    assert plan.host_unsupported == [f"line 2: ADD {archive}: URLs and archives need a container"]


def test_unsupported__copy_of_archive_is_plain_copy():
    plan = parse("FROM x\nCOPY data.tar.gz /app/\n")
    assert _copies(plan) == [("data.tar.gz", "/app/")]
    assert plan.host_unsupported == []


def test_unsupported__multi_stage_from():
    plan = parse("FROM golang AS build\nWORKDIR /src\nFROM debian\nCOPY a.txt /app/\n")
    assert plan.base_image == "golang"
    assert plan.host_unsupported == ["line 3: FROM debian: multi-stage builds need a container"]


@pytest.mark.parametrize("destination", ["/usr/local/bin/", "/usr", "/etc/app.conf", "/"])
def test_unsupported__copy_into_system_folder(destination):
    plan = parse(f"FROM x\nCOPY tool {destination}\n")
    assert plan.copies == []
    assert plan.host_unsupported == [f"line 2: COPY into {destination}: host system folders are read-only"]


def test_unsupported__copy_into_usr_via_workdir():
    plan = parse("FROM x\nWORKDIR /usr/share\nCOPY a.txt ./\n")
    assert plan.copies == []
    assert plan.host_unsupported == ["line 3: COPY into /usr/share/: host system folders are read-only"]


@pytest.mark.parametrize("destination", ["/library/", "/devtools/", "/system/", "/binaries/"])
def test_unsupported__folder_only_sharing_a_prefix_is_not_system(destination):
    plan = parse(f"FROM x\nCOPY a.txt {destination}\n")
    assert plan.host_unsupported == []
    assert _copies(plan) == [("a.txt", destination)]


def test_unsupported__unknown_instruction():
    plan = parse("FROM x\nONBUILD RUN foo\n")
    assert plan.host_unsupported == ["line 2: ONBUILD: not supported on the host"]


def test_unsupported__every_problem_listed_in_order():
    plan = parse("FROM x\nRUN a\nUSER bob\nADD http://h/f /x/\n")
    assert [p.split(":")[0] for p in plan.host_unsupported] == ["line 2", "line 3", "line 4"]
