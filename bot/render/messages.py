"""Every sentence of the guide, in English and Chinese.

Keys are referenced by :mod:`bot.classify`, :mod:`bot.focus` and the template.
Parameters are made safe by :func:`format_params` before they are substituted,
so no message can quote PR text raw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.render import sanitize

MESSAGES: dict[str, dict[str, str]] = {
    # headings
    "title": {"en": "Reading guide for #{number}", "zh": "#{number} 阅读指南"},
    "h.focus": {"en": "What to focus on", "zh": "阅读重点"},
    "h.changed": {"en": "What changed", "zh": "改动概览"},
    "h.tests": {"en": "Tests", "zh": "测试"},
    "h.deps": {"en": "Dependencies", "zh": "依赖"},
    "h.review": {"en": "Review highlights", "zh": "评审要点"},
    "h.follow": {"en": "Follow-ups", "zh": "后续跟进"},
    "h.labels": {"en": "Labels", "zh": "标签"},
    "h.score": {"en": "Why this score ({importance}/10)", "zh": "评分依据（{importance}/10）"},
    "h.notices": {"en": "Notices", "zh": "提示"},
    "h.files": {"en": "All changed files ({count})", "zh": "全部改动文件（{count} 个）"},
    "h.config": {"en": "prguide configuration in this PR", "zh": "本 PR 中的 prguide 配置"},
    # summary line
    "summary": {"en": "{type} in {areas}: {description}", "zh": "{areas} · {type}：{description}"},
    "summary.untyped": {"en": "{areas}: {description}", "zh": "{areas}：{description}"},
    "summary.noarea": {"en": "{type}: {description}", "zh": "{type}：{description}"},
    "summary.scale": {"en": "({count} files, +{additions}/−{deletions} lines)", "zh": "（{count} 个文件，+{additions}/−{deletions} 行）"},
    "summary.scale.one": {"en": "(1 file, +{additions}/−{deletions} lines)", "zh": "（1 个文件，+{additions}/−{deletions} 行）"},
    "summary.reverts": {"en": "Reverts #{number}.", "zh": "回退了 #{number}。"},
    "summary.breaking": {"en": "Breaking change.", "zh": "破坏性变更。"},
    # change types
    "type.revert": {"en": "Revert", "zh": "回退"},
    "type.fix": {"en": "Fix", "zh": "修复"},
    "type.feature": {"en": "Feature", "zh": "新功能"},
    "type.perf": {"en": "Performance", "zh": "性能优化"},
    "type.refactor": {"en": "Refactor", "zh": "重构"},
    "type.test": {"en": "Tests", "zh": "测试"},
    "type.docs": {"en": "Docs", "zh": "文档"},
    "type.ci": {"en": "CI", "zh": "CI"},
    "type.build": {"en": "Build", "zh": "构建"},
    "type.chore": {"en": "Chore", "zh": "日常维护"},
    # verdict
    "level.deep": {"en": "Deep read", "zh": "值得精读"},
    "level.quick": {"en": "Quick read", "zh": "快速阅读"},
    "level.skim": {"en": "Skim", "zh": "略读即可"},
    "level.skip": {"en": "Safe to skip", "zh": "可以跳过"},
    "verdict": {
        "en": "**{level}** (~{minutes} min) · importance **{importance}/10**",
        "zh": "**{level}**（约 {minutes} 分钟）· 重要度 **{importance}/10**",
    },
    "verdict.for": {"en": "For {audience}.", "zh": "适合：{audience}。"},
    "verdict.for_default": {"en": "For anyone working on {dirs}.", "zh": "适合：在 {dirs} 下工作的开发者。"},
    "verdict.top": {"en": "Mostly because: {factors}.", "zh": "主要因为：{factors}。"},
    "list.sep": {"en": "; ", "zh": "；"},
    "list.and": {"en": ", ", "zh": "、"},
    # importance factors
    "factor.base": {"en": "every merged PR starts at 1", "zh": "每个合并的 PR 基础分为 1"},
    "factor.size": {"en": "{count} lines of code changed", "zh": "改动了 {count} 行代码"},
    "factor.size.one": {"en": "1 line of code changed", "zh": "改动了 1 行代码"},
    "factor.behaviour": {"en": "changes how the code behaves", "zh": "改变了代码的行为"},
    "factor.rule": {"en": "rule {rule} matched", "zh": "命中规则 {rule}"},
    "factor.api_added": {"en": "{count} public definitions added ({names})", "zh": "新增 {count} 个公开定义（{names}）"},
    "factor.api_added.one": {"en": "a public definition added ({names})", "zh": "新增 1 个公开定义（{names}）"},
    "factor.api_removed": {"en": "{count} public definitions removed ({names})", "zh": "删除 {count} 个公开定义（{names}）"},
    "factor.api_removed.one": {"en": "a public definition removed ({names})", "zh": "删除 1 个公开定义（{names}）"},
    "factor.config": {"en": "{count} config keys added or removed ({names})", "zh": "增删 {count} 个配置项（{names}）"},
    "factor.config.one": {"en": "a config key added or removed ({names})", "zh": "增删 1 个配置项（{names}）"},
    "factor.breaking": {"en": "marked as a breaking change", "zh": "标记为破坏性变更"},
    "factor.tests": {"en": "{count} tests added with the change", "zh": "随改动新增 {count} 个测试"},
    "factor.tests.one": {"en": "a test added with the change", "zh": "随改动新增 1 个测试"},
    "factor.deps": {"en": "{count} dependencies changed ({names})", "zh": "变更 {count} 个依赖（{names}）"},
    "factor.deps.one": {"en": "a dependency changed ({names})", "zh": "变更 1 个依赖（{names}）"},
    "factor.deps_major": {"en": "major version change of {names}: expect upstream breaking changes", "zh": "{names} 跨大版本升级：上游可能有破坏性变更"},
    "factor.shim": {"en": "adds compatibility handling (import fallback or version check)", "zh": "加入兼容处理（导入回退或版本判断）"},
    "factor.revert": {"en": "reverts an earlier change: worth knowing why", "zh": "回退了之前的改动，值得了解原因"},
    "factor.review": {"en": "review discussion ({threads} threads or changes requested)", "zh": "评审讨论较多（{threads} 个讨论串或被要求修改）"},
    "factor.bot": {"en": "opened by a bot ({author})", "zh": "由机器人提交（{author}）"},
    "factor.no_source": {"en": "no source code changed", "zh": "没有改动源代码"},
    "factor.clamped": {"en": "the factors add up to {total}; the score is kept within 1–10", "zh": "各项合计 {total} 分；评分限定在 1–10 之间"},
    "factor.points": {"en": " (+{points})", "zh": "（+{points}）"},
    # focus points
    "focus.removed": {"en": "removed {names}: a code path that no longer exists; check nothing still relies on it", "zh": "删除了 {names}：这条代码路径已不存在，确认没有调用方仍依赖它"},
    "focus.file_removed": {"en": "file removed ({lines} lines): find what replaces it", "zh": "整个文件被删除（{lines} 行）：找到替代它的代码"},
    "focus.config_removed": {"en": "config keys removed: {names}; existing configs that set them will break or be ignored", "zh": "删除了配置项 {names}：已有配置若仍设置它们会报错或被忽略"},
    "focus.config_added": {"en": "new config keys {names}: read their defaults and where they are read", "zh": "新增配置项 {names}：看清默认值以及在哪里被读取"},
    "focus.shim": {"en": "compatibility handling ({what}): {code}; note which versions each branch serves", "zh": "兼容处理（{what}）：{code}；留意每个分支服务于哪些版本"},
    "shim.import fallback": {"en": "import fallback", "zh": "导入回退"},
    "shim.hasattr check": {"en": "feature check", "zh": "特性探测"},
    "shim.version check": {"en": "version check", "zh": "版本判断"},
    "shim.other": {"en": "fallback", "zh": "回退"},
    "focus.dep_added": {"en": "adds dependency {name} {new}", "zh": "新增依赖 {name} {new}"},
    "focus.dep_removed": {"en": "drops dependency {name}", "zh": "移除依赖 {name}"},
    "focus.dep_changed": {"en": "dependency {name} moves {old} → {new}: check the upstream changelog", "zh": "依赖 {name} 从 {old} 变为 {new}：看一下上游的变更说明"},
    "focus.added": {"en": "new {names}: the entry point of this change", "zh": "新增 {names}：这次改动的入口"},
    "focus.added_more": {"en": "new {names}", "zh": "新增 {names}"},
    "focus.removed_tree": {"en": "{count} files removed here ({lines} lines): find where this code went and what still imports it", "zh": "此处删除了 {count} 个文件（{lines} 行）：弄清这些代码迁去了哪里、还有谁在引用"},
    "focus.dep_major": {"en": "dependency {name} moves {old} → {new}, a major version: read the upstream changelog for breaking changes", "zh": "依赖 {name} 从 {old} 升到 {new}，跨大版本：查看上游变更说明中的破坏性变更"},
    "focus.largest": {"en": "+{additions}/−{deletions} lines here", "zh": "此处 +{additions}/−{deletions} 行"},
    "focus.largest_symbols": {"en": "+{additions}/−{deletions} lines, in {names}", "zh": "+{additions}/−{deletions} 行，涉及 {names}"},
    "focus.tests": {"en": "tests {names} show the intended behaviour: read them first", "zh": "测试 {names} 说明了预期行为，建议先读"},
    "focus.similar": {"en": " (and {count} more like it)", "zh": "（另有 {count} 处类似）"},
    "focus.thread": {"en": "most discussed in review ({comments} comments by {people})", "zh": "评审中讨论最多（{people} 共 {comments} 条评论）"},
    # what changed
    "changed.area": {"en": "Area", "zh": "领域"},
    "changed.kind": {"en": "Kind", "zh": "类型"},
    "changed.files": {"en": "Files", "zh": "文件数"},
    "changed.other": {"en": "other", "zh": "其他"},
    "changed.removed_paths": {"en": "Removed code paths: {names}.", "zh": "删除的代码路径：{names}。"},
    "changed.removed_files": {"en": "Files removed: {count} ({lines} lines).", "zh": "删除文件 {count} 个（{lines} 行）。"},
    "changed.renamed": {"en": "Files renamed or moved: {count}.", "zh": "重命名或移动的文件：{count} 个。"},
    "changed.file": {"en": "{path} ({status}, +{additions}/−{deletions})", "zh": "{path}（{status}，+{additions}/−{deletions}）"},
    "changed.more_files": {"en": "…and {count} more files.", "zh": "……以及另外 {count} 个文件。"},
    "kind.source": {"en": "source", "zh": "源代码"},
    "kind.test": {"en": "tests", "zh": "测试"},
    "kind.docs": {"en": "docs", "zh": "文档"},
    "kind.config": {"en": "config", "zh": "配置"},
    "kind.ci": {"en": "CI", "zh": "CI"},
    "kind.build": {"en": "build/deps", "zh": "构建/依赖"},
    "kind.example": {"en": "examples", "zh": "示例"},
    "kind.generated": {"en": "generated/lock", "zh": "生成/锁文件"},
    "kind.binary": {"en": "binary", "zh": "二进制"},
    "status.added": {"en": "added", "zh": "新增"},
    "status.removed": {"en": "removed", "zh": "删除"},
    "status.modified": {"en": "modified", "zh": "修改"},
    "status.renamed": {"en": "renamed", "zh": "重命名"},
    "status.copied": {"en": "copied", "zh": "复制"},
    "status.changed": {"en": "changed", "zh": "变更"},
    "status.unchanged": {"en": "unchanged", "zh": "未变"},
    # tests
    "tests.added": {"en": "{count} tests added in {file}: {names}", "zh": "{file} 新增 {count} 个测试：{names}"},
    "tests.added.one": {"en": "a test added in {file}: {names}", "zh": "{file} 新增 1 个测试：{names}"},
    "tests.changed": {"en": "{count} test files changed (+{additions}/−{deletions}).", "zh": "改动了 {count} 个测试文件（+{additions}/−{deletions}）。"},
    "tests.changed.one": {"en": "1 test file changed (+{additions}/−{deletions}).", "zh": "改动了 1 个测试文件（+{additions}/−{deletions}）。"},
    "tests.none": {"en": "No tests changed.", "zh": "没有改动测试。"},
    # dependencies
    "deps.added": {"en": "{name} added {new} ({file})", "zh": "新增 {name} {new}（{file}）"},
    "deps.removed": {"en": "{name} removed ({file})", "zh": "移除 {name}（{file}）"},
    "deps.changed": {"en": "{name} {old} → {new} ({file})", "zh": "{name} {old} → {new}（{file}）"},
    "deps.lock": {"en": "{count} lock files regenerated: {names}", "zh": "重新生成了 {count} 个锁文件：{names}"},
    "deps.lock.one": {"en": "lock file regenerated: {names}", "zh": "重新生成了锁文件：{names}"},
    # review
    "review.none": {"en": "No review discussion was recorded for this PR.", "zh": "此 PR 没有记录到评审讨论。"},
    "review.reviewers": {"en": "Reviewers: {reviewers}.", "zh": "评审人：{reviewers}。"},
    "review.state.APPROVED": {"en": "approved", "zh": "批准"},
    "review.state.CHANGES_REQUESTED": {"en": "requested changes", "zh": "要求修改"},
    "review.state.COMMENTED": {"en": "commented", "zh": "评论"},
    "review.state.DISMISSED": {"en": "dismissed", "zh": "已撤销"},
    "review.thread": {"en": "{where} · {comments} comments ({people}): “{opening}”", "zh": "{where} · {comments} 条评论（{people}）：“{opening}”"},
    "review.threads_more": {"en": "…and {count} more threads.", "zh": "……以及另外 {count} 个讨论串。"},
    "review.bot": {"en": "bot", "zh": "机器人"},
    # follow-ups
    "follow.todo": {"en": "TODO added in {file}: {text}", "zh": "{file} 新增 TODO：{text}"},
    "follow.suggestion": {"en": "a review suggestion on {file} got no reply from the author", "zh": "{file} 上的评审建议没有得到作者回复"},
    "follow.changes_requested": {"en": "changes were requested by {people}: check they were addressed", "zh": "{people} 曾要求修改：确认已处理"},
    "follow.no_tests": {"en": "{count} source files changed ({lines} lines) without test changes: consider a regression test", "zh": "改动了 {count} 个源文件（{lines} 行）但没有测试改动：考虑补一个回归测试"},
    "follow.truncated": {"en": "GitHub listed only {listed} of {total} changed files; this guide covers the listed ones", "zh": "GitHub 只列出了 {total} 个改动文件中的 {listed} 个，本指南只覆盖已列出的文件"},
    "follow.missing_patches": {"en": "GitHub showed no diff for {count} large files ({names}); read them in the repository", "zh": "GitHub 没有展示 {count} 个大文件的 diff（{names}），请到仓库中阅读"},
    "follow.missing_patches.one": {"en": "GitHub showed no diff for a large file ({names}); read it in the repository", "zh": "GitHub 没有展示大文件 {names} 的 diff，请到仓库中阅读"},
    "follow.none": {"en": "Nothing obvious left to do.", "zh": "没有明显的后续事项。"},
    "follow.reverts": {"en": "read #{number} to see what was reverted and why", "zh": "阅读 #{number}，了解被回退的内容及原因"},
    # labels
    "labels.rule": {"en": "{label} ← rule {rule}", "zh": "{label} ← 规则 {rule}"},
    "labels.human": {"en": "{label} ← added by a maintainer", "zh": "{label} ← 由维护者添加"},
    "labels.removed": {"en": "Removed by a maintainer and kept off: {names}.", "zh": "已被维护者移除、不再自动添加：{names}。"},
    "labels.none": {"en": "No labels.", "zh": "没有标签。"},
    # config check
    "config.ok": {"en": "{file} changed in this PR and is valid.", "zh": "本 PR 修改了 {file}，校验通过。"},
    "config.bad": {"en": "{file} changed in this PR and has problems; prguide uses its defaults until they are fixed:", "zh": "本 PR 修改了 {file}，但存在问题；修复前 prguide 将使用默认配置："},
    "config.invalid": {"en": "The repository's {file} is invalid, so prguide used its defaults:", "zh": "仓库的 {file} 无效，prguide 已改用默认配置："},
    "config.forbidden": {
        "en": "{file} could not be read, so the default settings apply: GitHub refused (403) because the app lacks the **Contents: read** permission on this repository. An organization owner or repository admin can grant it in the app's installation settings.",
        "zh": "无法读取 {file}，已按默认设置生成：GitHub 拒绝了读取（403），因为本应用在此仓库没有 **Contents: read** 权限。组织所有者或仓库管理员可在应用的安装设置中授予该权限。",
    },
    "labels.over_limit": {
        "en": "GitHub allows at most 100 labels on a pull request, so these labels were not applied: {names}.",
        "zh": "GitHub 每个 PR 最多允许 100 个标签，以下标签未添加：{names}。",
    },
    "labels.forbidden": {
        "en": "These labels were not applied: {names}. GitHub refused (403) because the app lacks the **Issues: write** permission on this repository; an organization owner or repository admin can grant it in the app's installation settings.",
        "zh": "以下标签未添加：{names}。GitHub 拒绝了写入（403），因为本应用在此仓库没有 **Issues: write** 权限；组织所有者或仓库管理员可在应用的安装设置中授予该权限。",
    },
    "labels.refused": {
        "en": "These labels were not applied: {names}. GitHub refused them: {text}.",
        "zh": "以下标签未添加：{names}。GitHub 拒绝了它们：{text}。",
    },
    # footer
    "footer": {
        "en": "prguide {version} · {count} rules matched · comment `/prguide help` for commands",
        "zh": "prguide {version} · 命中 {count} 条规则 · 评论 `/prguide help` 查看命令",
    },
    "footer.one": {
        "en": "prguide {version} · 1 rule matched · comment `/prguide help` for commands",
        "zh": "prguide {version} · 命中 1 条规则 · 评论 `/prguide help` 查看命令",
    },
    "skipped": {"en": "prguide skipped this pull request (rule {rule}).", "zh": "prguide 跳过了此 PR（规则 {rule}）。"},
    "details.more": {"en": "Show all", "zh": "展开全部"},
}

_CODE_PARAMS = {"name", "old", "new", "file", "rule", "label", "author", "code"}
_QUOTE_PARAMS = {"text", "description", "opening"}


def format_params(lang: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Make message parameters safe and readable.

    Sequences of names become comma-separated code spans (with "…" when ``count``
    says there are more); ``people`` become un-pinged logins; free text is quoted
    with mentions and HTML neutralised; integers get thousands separators.
    """
    out: dict[str, Any] = {}
    sep = MESSAGES["list.and"][lang]
    for key, value in params.items():
        if key == "people":
            out[key] = sep.join(sanitize.login(p) for p in value)
        elif key == "names":
            names = [sanitize.code(n, 64) for n in value]
            more = int(params.get("count", len(names))) > len(names)
            out[key] = sep.join(names) + ("…" if more else "")
        elif key == "what":
            shim = f"shim.{value}"
            out[key] = MESSAGES[shim][lang] if shim in MESSAGES else MESSAGES["shim.other"][lang]
        elif key in _CODE_PARAMS:
            out[key] = sanitize.code(value) if value not in (None, "") else "—"
        elif key in _QUOTE_PARAMS:
            out[key] = sanitize.quote(str(value), 120)
        elif isinstance(value, bool) or value is None:
            out[key] = value
        elif isinstance(value, int):
            out[key] = f"{value:,}"
        else:
            out[key] = value
    return out


def t(key: str, lang: str, params: Mapping[str, Any] | None = None, *, raw: bool = False) -> str:
    """The message ``key`` in ``lang`` with ``params`` substituted.

    When ``params["count"]`` is 1 and a ``KEY.one`` message exists, that singular form
    is used. Unless ``raw``, parameters pass through :func:`format_params`. Raises ``KeyError``
    for an unknown key (a programming error, caught by the tests).
    """
    if params and params.get("count") == 1 and f"{key}.one" in MESSAGES:
        key = f"{key}.one"
    template = MESSAGES[key][lang]
    if not params:
        return template
    values = dict(params) if raw else format_params(lang, params)
    return template.format(**values)
