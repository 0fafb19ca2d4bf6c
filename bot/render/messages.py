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
    "type.deps": {"en": "Dependency update", "zh": "依赖更新"},
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
    "factor.config": {"en": "{count} config keys added, removed or given a new default ({names})", "zh": "{count} 个配置项被增删或改了默认值（{names}）"},
    "factor.config.one": {"en": "a config key added, removed or given a new default ({names})", "zh": "1 个配置项被增删或改了默认值（{names}）"},
    "factor.breaking": {"en": "breaking for existing users ({count} reasons, listed with the summary)", "zh": "对现有用户是破坏性变更（{count} 条原因，见摘要）"},
    "factor.refactor": {"en": "restructures source code: the same behaviour is intended, check it is kept", "zh": "重构源代码：意图保持行为不变，需确认确实不变"},
    "factor.size_other": {"en": "{count} lines of config, build, CI or tests changed (no source)", "zh": "改动了 {count} 行配置、构建、CI 或测试（无源代码）"},
    "factor.api": {"en": "public API changes: {added} added, {removed} removed ({names})", "zh": "公开 API 变化：新增 {added} 个、删除 {removed} 个（{names}）"},
    "factor.numerics": {"en": "touches numerics ({code} in {file}): results can change silently", "zh": "涉及数值计算（{file} 中的 {code}）：结果可能悄然改变"},
    "factor.concurrency": {"en": "touches concurrency ({code} in {file})", "zh": "涉及并发（{file} 中的 {code}）"},
    "factor.untrusted": {"en": "touches code that runs or parses untrusted input ({code} in {file})", "zh": "涉及执行或解析外部输入的代码（{file} 中的 {code}）"},
    "factor.cap": {"en": "{part} is capped at {max} points", "zh": "{part}部分最多计 {max} 分"},
    "part.reach": {"en": "reach", "zh": "影响面"},
    "part.risk": {"en": "risk", "zh": "风险"},
    "factor.breaking.one": {"en": "breaking for existing users (the reason is given with the summary)", "zh": "对现有用户是破坏性变更（原因见摘要）"},

    "factor.tests": {"en": "{count} tests added: the behaviour is pinned down and worth knowing", "zh": "新增 {count} 个测试：行为被测试固定下来，值得了解"},
    "factor.tests.one": {"en": "a test added: the behaviour is pinned down and worth knowing", "zh": "新增 1 个测试：行为被测试固定下来，值得了解"},
    "factor.deps": {"en": "{count} dependencies changed ({names})", "zh": "变更 {count} 个依赖（{names}）"},
    "factor.deps.one": {"en": "a dependency changed ({names})", "zh": "变更 1 个依赖（{names}）"},
    "factor.deps_major": {"en": "{names} moves to a new major version: upstream may break callers", "zh": "{names} 跨大版本升级：上游可能有破坏性变更"},
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
    "focus.added": {"en": "adds {names}", "zh": "新增 {names}"},
    "focus.added_called": {"en": "adds {names}, which the changed code calls or registers: the entry point of this change", "zh": "新增 {names}，并被改动的代码调用或注册：这次改动的入口"},
    "focus.config_removed.plain": {"en": "fields removed: {names}; code that sets them must change", "zh": "删除了字段 {names}：设置它们的代码需要修改"},
    "focus.config_added.plain": {"en": "new fields {names}", "zh": "新增字段 {names}"},
    "focus.largest_uses": {"en": "+{additions}/−{deletions} lines here; brings in or drops {uses}", "zh": "此处 +{additions}/−{deletions} 行，引入或去掉了 {uses}"},
    "focus.largest_symbols_uses": {"en": "+{additions}/−{deletions} lines, in {names}; brings in or drops {uses}", "zh": "+{additions}/−{deletions} 行，涉及 {names}，引入或去掉了 {uses}"},
    "why.breaking": {"en": "Breaking, because:", "zh": "破坏性变更的依据："},
    "why.model": {
        "en": "Importance is 1 + reach (at most 3) + risk (at most 4) + the other factors, kept within 1–10. Reading time is 1 + √(weighted changed lines) = {minutes} min: a source line weighs 1.5, config and build 0.4, examples 0.15, tests, docs and CI 0.1; removed files, lock and generated files nothing. Level: 7+ and 20+ minutes is a deep read, 5+ (4+ when behaviour changes) quick, 2–4 skim, 1 skip; this one: {level}. See docs/judgement.md.",
        "zh": "重要度 = 1 + 影响面（最多 3）+ 风险（最多 4）+ 其他因素，限定在 1–10。阅读时间 = 1 + √(加权改动行数) = {minutes} 分钟：源代码一行计 1.5，配置与构建 0.4，示例 0.15，测试、文档与 CI 0.1；整文件删除、锁文件与生成文件不计。级别：7 分以上且需 20 分钟以上为精读，5 分以上（行为改变时 4 分以上）为快速阅读，2–4 分略读，1 分跳过；本 PR：{level}。详见 docs/judgement.md。",
    },
    "focus.design": {"en": "the author describes this design point: “{text}”", "zh": "作者描述的设计要点：“{text}”"},
    "focus.tests_uses": {"en": "tests {names} show the intended behaviour (they use {uses}): read them first", "zh": "测试 {names} 说明了预期行为（用到 {uses}），建议先读"},
    "focus.described": {"en": "the description names {names}, changed here", "zh": "描述中提到的 {names} 在此处改动"},
    "focus.housekeeping": {"en": "Housekeeping, no need to read line by line: {items}.", "zh": "例行维护，无需逐行阅读：{items}。"},
    "house.generated": {"en": "{count} generated files ({names})", "zh": "{count} 个生成文件（{names}）"},
    "house.generated.one": {"en": "generated file {names}", "zh": "生成文件 {names}"},
    "house.locks": {"en": "{count} lock files ({names})", "zh": "{count} 个锁文件（{names}）"},
    "house.locks.one": {"en": "lock file {names}", "zh": "锁文件 {names}"},
    "house.images": {"en": "image or version tags in {count} CI files ({names})", "zh": "{count} 个 CI 文件中的镜像或版本标签（{names}）"},
    "house.images.one": {"en": "image or version tags in {names}", "zh": "{names} 中的镜像或版本标签"},
    "house.owners": {"en": "code owners ({names})", "zh": "代码负责人（{names}）"},
    "house.owners.one": {"en": "code owners ({names})", "zh": "代码负责人（{names}）"},
    "house.formatting": {"en": "formatting only in {count} files ({names})", "zh": "{count} 个文件仅调整格式（{names}）"},
    "house.formatting.one": {"en": "formatting only in {names}", "zh": "{names} 仅调整格式"},
    "house.comments": {"en": "comments only in {count} files ({names})", "zh": "{count} 个文件仅改注释（{names}）"},
    "house.comments.one": {"en": "comments only in {names}", "zh": "{names} 仅改注释"},
    "focus.fact.default_changed": {"en": "default of {name} changes from {old} to {new}: runs that rely on the old default behave differently", "zh": "{name} 的默认值从 {old} 改为 {new}：依赖旧默认值的运行行为会改变"},
    "focus.fact.default_changed.plain": {"en": "default of {name} changes from {old} to {new}", "zh": "{name} 的默认值从 {old} 改为 {new}"},
    "focus.fact.key_removed": {"en": "config key {name} removed: configs that still set it will fail or be ignored", "zh": "删除了配置项 {name}：仍设置它的配置会报错或被忽略"},
    "focus.fact.key_removed.many": {"en": "config keys {names} removed: configs that still set them will fail or be ignored", "zh": "删除了配置项 {names}：仍设置它们的配置会报错或被忽略"},
    "focus.fact.key_removed.plain.many": {"en": "{names} removed", "zh": "删除了 {names}"},
    "focus.fact.field_removed.many": {"en": "config fields {names} removed: configs that set them must change", "zh": "删除了配置字段 {names}：设置它们的配置需要修改"},
    "focus.fact.field_removed.plain.many": {"en": "fields {names} removed", "zh": "删除了字段 {names}"},
    "focus.fact.symbol_removed.many": {"en": "removed {names}: check nothing still relies on them", "zh": "删除了 {names}：确认没有调用方仍依赖它们"},
    "focus.fact.key_removed.plain": {"en": "{name} removed", "zh": "删除了 {name}"},
    "focus.fact.key_renamed": {"en": "config key {old} renamed to {new}: existing configs must follow", "zh": "配置项 {old} 改名为 {new}：已有配置需要同步修改"},
    "focus.fact.key_renamed.plain": {"en": "{old} renamed to {new}", "zh": "{old} 改名为 {new}"},
    "focus.fact.field_removed": {"en": "config field {name} removed: configs that set it must change", "zh": "删除了配置字段 {name}：设置它的配置需要修改"},
    "focus.fact.field_removed.plain": {"en": "field {name} removed", "zh": "删除了字段 {name}"},
    "focus.fact.signature_changed": {"en": "signature of {name} changes ({detail}): check every caller", "zh": "{name} 的签名改变（{detail}）：检查所有调用方"},
    "focus.fact.parameter_added": {"en": "{name}: new parameter with a default ({new})", "zh": "{name}：新增带默认值的参数（{new}）"},
    "focus.fact.check_added": {"en": "new check in {name} raises {detail}: input that used to pass is now refused", "zh": "{name} 中新增的检查会抛出 {detail}：以前可以通过的输入现在会被拒绝"},
    "focus.fact.check_removed": {"en": "check in {name} removed (it raised {detail}): input it refused now passes", "zh": "删除了 {name} 中的检查（原先抛出 {detail}）：以前被拒绝的输入现在会通过"},
    "focus.fact.symbol_removed": {"en": "removed {name}: check nothing still relies on it", "zh": "删除了 {name}：确认没有调用方仍依赖它"},
    "focus.fact.symbol_renamed": {"en": "{old} renamed to {new}: callers of the old name must change", "zh": "{old} 改名为 {new}：使用旧名字的调用方需要修改"},
    "focus.fact.symbol_moved": {"en": "{name} moved ({detail}): imports of the old location must change", "zh": "{name} 被移动（{detail}）：从旧位置导入的代码需要修改"},
    "focus.fact.metric_renamed": {"en": "metric {old} renamed to {new}: dashboards and alerts must follow", "zh": "指标 {old} 改名为 {new}：看板和告警需要同步"},
    "focus.fact.dep_floor_raised": {"en": "dependency {name}: minimum version raised {old} → {new}; older installs must upgrade", "zh": "依赖 {name} 的最低版本从 {old} 提高到 {new}：旧环境需要升级"},
    "focus.fact.dep_pinned": {"en": "dependency {name} is now pinned to {new}", "zh": "依赖 {name} 现在固定为 {new}"},
    "focus.removed_tree.docs": {"en": "{count} pages removed here ({lines} lines), among them {names}: check nothing still links to them", "zh": "此处删除了 {count} 个文档页（{lines} 行），包括 {names}：确认没有页面仍链接到它们"},
    "focus.removed_tree.docs.one": {"en": "{names} removed ({lines} lines): check nothing still links to it", "zh": "删除了 {names}（{lines} 行）：确认没有页面仍链接到它"},
    "focus.fact.dep_ceiling_added": {"en": "dependency {name}: upper bound added ({new})", "zh": "依赖 {name} 新增版本上限（{new}）"},
    "focus.fact.dep_pin_changed": {"en": "dependency {name} moves {old} → {new}", "zh": "依赖 {name} 从 {old} 变为 {new}"},
    "focus.fact.dep_pin_changed.major": {"en": "dependency {name} moves {old} → {new}, a major version: read the upstream changelog for breaking changes", "zh": "依赖 {name} 从 {old} 升到 {new}，跨大版本：查看上游变更说明中的破坏性变更"},
    "focus.fact.dep_pin_changed.pre1": {"en": "dependency {name} moves {old} → {new}, a pre-1.0 minor version: such releases may break, check the changelog", "zh": "依赖 {name} 从 {old} 变为 {new}，1.0 之前的次版本升级：可能不兼容，请查看变更说明"},
    "focus.fact.dep_pin_changed.commit": {"en": "pinned commit of {name} moved {old} → {new}", "zh": "{name} 固定的提交从 {old} 移到 {new}"},
    "focus.fact.dep_commit_moved": {"en": "pinned commit of {name} moved {old} → {new}", "zh": "{name} 固定的提交从 {old} 移到 {new}"},
    "focus.fact.dep_added": {"en": "adds dependency {name} {new}", "zh": "新增依赖 {name} {new}"},
    "focus.fact.dep_removed": {"en": "drops dependency {name}", "zh": "移除依赖 {name}"},
    "breaking.marked": {"en": "the author marks it breaking", "zh": "作者标明为破坏性变更"},
    "breaking.default": {"en": "default of {name} changes from {old} to {new}", "zh": "{name} 的默认值从 {old} 改为 {new}"},
    "breaking.key_removed": {"en": "config key {name} removed", "zh": "删除了配置项 {name}"},
    "breaking.key_renamed": {"en": "config key {old} renamed to {new}", "zh": "配置项 {old} 改名为 {new}"},
    "breaking.file_removed": {"en": "{name} removed, with {names}", "zh": "删除了 {name}，其中包括 {names}"},
    "breaking.signature": {"en": "signature of {name} changes ({detail})", "zh": "{name} 的签名改变（{detail}）"},
    "breaking.symbol_removed": {"en": "public {name} removed", "zh": "删除了公开的 {name}"},
    "breaking.symbol_renamed": {"en": "{old} renamed to {new}", "zh": "{old} 改名为 {new}"},
    "breaking.symbol_moved": {"en": "{name} moved ({detail})", "zh": "{name} 被移动（{detail}）"},
    "breaking.check": {"en": "{name} now raises {detail} on input it used to accept", "zh": "{name} 现在会对以前接受的输入抛出 {detail}"},
    "breaking.dep_floor": {"en": "minimum {name} version raised {old} → {new}", "zh": "{name} 的最低版本从 {old} 提高到 {new}"},
    "breaking.dep_major": {"en": "{name} moves to a new major version ({old} → {new})", "zh": "{name} 升级到新的大版本（{old} → {new}）"},
    "summary.breaking_reasons": {"en": "Breaking: {reasons}.", "zh": "破坏性变更：{reasons}。"},
    "summary.breaking_more": {"en": " (and {count} more)", "zh": "（另有 {count} 条）"},
    "summary.sentence": {"en": "{type} in {areas}: {what}.", "zh": "{areas}的{type}：{what}。"},
    "summary.sentence.noarea": {"en": "{type}: {what}.", "zh": "{type}：{what}。"},
    "summary.title": {"en": "Title: {title}", "zh": "原标题：{title}"},
    "summary.what.symbols": {"en": "changes {names}", "zh": "改动 {names}"},
    "summary.what.added": {"en": "adds {names}", "zh": "新增 {names}"},
    "summary.what.files": {"en": "{count} files changed", "zh": "改动了 {count} 个文件"},
    "summary.areas_more": {"en": "{areas} and {count} more", "zh": "{areas}等（另有 {count} 个领域）"},
    "list.more": {"en": "…and {count} more", "zh": "……以及另外 {count} 项"},
    "changed.code_lines": {"en": "Lines of source code changed: {count}.", "zh": "源代码改动行数：{count}。"},
    "follow.description_missing": {"en": "the description mentions {names}, which this diff does not contain", "zh": "描述中提到了 {names}，但本 diff 中并不包含"},
    "follow.description_missing.one": {"en": "the description mentions {names}, which this diff does not contain", "zh": "描述中提到了 {names}，但本 diff 中并不包含"},
    "deps.more": {"en": "…and {count} more dependency changes", "zh": "……以及另外 {count} 项依赖变更"},
    "focus.added_more": {"en": "new {names}", "zh": "新增 {names}"},
    "focus.removed_tree": {"en": "{count} files removed here ({lines} lines), among them {names}: find where this code went and what still imports it", "zh": "此处删除了 {count} 个文件（{lines} 行），包括 {names}：弄清这些代码迁去了哪里、还有谁在引用"},
    "focus.removed_tree.one": {"en": "{names} removed ({lines} lines): find where this code went and what still imports it", "zh": "删除了 {names}（{lines} 行）：弄清这些代码迁去了哪里、还有谁在引用"},
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
_QUOTE_PARAMS = {"text", "description", "opening", "detail"}


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
        elif key == "part":
            out[key] = MESSAGES.get(f"part.{value}", {}).get(lang, str(value))
        elif key in ("names", "uses"):
            names = [sanitize.code(n, 64) for n in value]
            more = key == "names" and int(params.get("count", len(names))) > len(names)
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
