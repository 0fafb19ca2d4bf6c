"""Definitions in languages other than Python, and TODO notes."""

from __future__ import annotations

import pytest

from bot.engine.analysis.patch import parse_patch
from bot.engine.analysis.symbols import analyse_symbols, definition_in
from bot.engine.analysis.todos import todos_added


@pytest.mark.parametrize(
    ("line", "language", "expected"),
    [
        ("func (s *Server) Start(ctx context.Context) error {", "go", ("Server.Start", "method")),
        ("func main() {", "go", ("main", "function")),
        ("type Store interface {", "go", ("Store", "type")),
        ("pub async fn handle(req: Request) -> Result<()> {", "rust", ("handle", "function")),
        ("impl<T> Display for Wrapper<T> {", "rust", ("Wrapper", "impl")),
        ("pub struct Config {", "rust", ("Config", "type")),
        ("export default async function handler(req, res) {", "javascript", ("handler", "function")),
        ("export const add = (a: number, b: number): number => a + b;", "typescript", ("add", "function")),
        ("export class Foo extends Bar {", "typescript", ("Foo", "class")),
        ("export interface Props {", "typescript", ("Props", "type")),
        ("static int parse_args(int argc, char **argv) {", "c", ("parse_args", "function")),
        ("void Foo::bar(const std::string& s)", "cpp", ("Foo::bar", "function")),
        ("__global__ void fused_kernel(float* x, int n) {", "cuda", ("fused_kernel", "function")),
        ("template <typename T> class Buffer {", "cpp", ("Buffer", "class")),
        ("setup_env() {", "shell", ("setup_env", "function")),
        ("function cleanup {", "shell", ("cleanup", "function")),
        ("public static void main(String[] args) {", "java", ("main", "method")),
        ("fun greet(name: String): String {", "kotlin", ("greet", "function")),
    ],
)
def test_definition_lines(line, language, expected):
    assert definition_in(line, language) == expected


@pytest.mark.parametrize(
    ("line", "language"),
    [
        ("    return foo(x);", "c"),
        ("if (ready) {", "c"),
        ("int (*callback)(int);", "c"),
        ("// func commented() {", "go"),
        ('echo "done"', "shell"),
        ("x = 1", "python"),
        ("const value = compute(1);", "javascript"),
    ],
)
def test_lines_that_define_nothing(line, language):
    assert definition_in(line, language) is None


def test_go_file_section_symbol_added_removed_modified_and_tests():
    patch = """@@ -10,6 +10,12 @@ func (s *Server) Start(ctx context.Context) error {
 	s.ready = true
-	return nil
+	return s.listen()
 }
-func oldHelper() {}
+func newHelper() {}
+func (s *Server) listen() error {
+	return nil
+}
+func TestListen(t *testing.T) {}
@@ -40,3 +46,3 @@ type Server struct {
-func Parse(a string) int {
+func Parse(a string, strict bool) int {
"""
    f = analyse_symbols(parse_patch(patch), "go")
    assert f.symbols_touched[0] == "Server.Start"
    assert [d.name for d in f.definitions_added] == ["newHelper", "Server.listen", "TestListen"]
    assert [d.name for d in f.definitions_removed] == ["oldHelper"]
    assert [d.name for d in f.definitions_modified] == ["Parse"]
    assert f.tests_added == ("TestListen",)


def test_typescript_test_titles_are_tests_added():
    patch = """@@ -1,2 +1,5 @@ describe("cart", () => {
   it("adds items", () => {});
+  it("removes items", () => {});
+  test.only('totals', () => {});
+  const helper = () => 1;
 });
"""
    f = analyse_symbols(parse_patch(patch), "typescript")
    assert f.tests_added == ("removes items", "totals")
    assert [d.name for d in f.definitions_added] == ["helper"]


def test_unsupported_language_gives_nothing():
    patch = "@@ -1 +1 @@\n-a\n+b"
    assert analyse_symbols(parse_patch(patch), "markdown").symbols_touched == ()


def test_todos_added_in_comments_only():
    added = [
        "    # TODO: remove after vllm 0.25",
        "x = 1  # FIXME handle None",
        "// HACK: work around driver bug",
        "<!-- XXX: outdated section -->",
        "name = 'XXXX'  # placeholder",
        'print("TODO list")',
        "    # TODO: remove after vllm 0.25",
    ]
    assert todos_added(added) == (
        "TODO: remove after vllm 0.25",
        "FIXME handle None",
        "HACK: work around driver bug",
        "XXX: outdated section",
    )


def test_todos_long_notes_keep_their_first_sentence_or_are_left_out():
    assert todos_added(["# TODO " + "x" * 300]) == ()
    assert todos_added(["# TODO: drop this. " + "x" * 300]) == ("TODO: drop this.",)


def test_a_todo_sentence_is_taken_across_its_continuation_lines():
    added = [
        "        # TODO(jhz): Switch to `set_expandable_segments` when the torch_npu library",
        "        # supports `torch.npu.memory._set_allocator_settings`",
        "        if is_npu_available:",
        "    # TODO: one line.",
        "    # Another comment, not the note's.",
        "        # TODO: prepare actions according to simulator type",
        "        # chunk_actions = prepare_actions(",
    ]
    assert todos_added(added) == (
        "TODO(jhz): Switch to `set_expandable_segments` when the torch_npu library supports `torch.npu.memory._set_allocator_settings`",
        "TODO: one line.",
        "TODO: prepare actions according to simulator type",
    )


def test_todos_none_without_markers():
    assert todos_added(["a = 1", "# plain comment"]) == ()


_ENUM_AND_NEW_FUNCTION = (
    "@@ -107,5 +107,6 @@ class AdvantageEstimator(str, Enum):\n"
    "     GRPO = \"grpo\"\n"
    "     OTB = \"otb\"\n"
    "+    GDPO = \"gdpo\"\n"
    " \n"
    " \n"
    " REGISTRY = {}\n"
    "@@ -357,6 +358,12 @@ def compute_grpo_outcome_advantage(\n"
    "         return advantages, advantages\n"
    " \n"
    " \n"
    "+@register_adv_est(AdvantageEstimator.GDPO)\n"
    "+def compute_gdpo_outcome_advantage(\n"
    "+    token_level_rewards,\n"
    "+):\n"
    "+    scores = token_level_rewards.sum(-1)\n"
    "+    return scores, scores\n"
    " \n"
    " \n"
    " def compute_rloo(x):\n"
)


def test_the_lines_of_a_new_function_are_not_said_to_be_in_the_enum_beside_it():
    from bot.engine.analysis import analyse
    from bot.engine.focus.model import ReviewSummary
    from bot.engine.focus.points import focus_points
    from bot.engine.render.messages import t
    from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

    f = ChangedFile("verl/trainer/ppo/core_algos.py", "modified", additions=7, patch=_ENUM_AND_NEW_FUNCTION)
    snap = PullRequestSnapshot(repository="o/r", number=1, title="t", changed_files=1, files=(f,))
    analysis = analyse(snap)
    assert analysis.files[0].symbols_touched == ("AdvantageEstimator", "compute_gdpo_outcome_advantage")
    points = focus_points(analysis, (), ReviewSummary())
    (largest,) = [p for p in points if p.key.startswith("focus.largest")]
    assert largest.params["names"] == ("AdvantageEstimator", "compute_gdpo_outcome_advantage")
    assert t(largest.key, "en", largest.params).startswith("+7/−0 lines, in `AdvantageEstimator`, `compute_gdpo_outcome_advantage`")
