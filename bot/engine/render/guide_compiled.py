"""guide.md.j2 compiled by Jinja 3.1.6: written by ``python -m bot.engine.render.precompile``, do not edit."""
# fmt: off
# ruff: noqa
SOURCE_SHA256 = 'e85f0d44cde1964e8cf8f7c5293aee3e361c119a4730be6db53004e4de334944'
JINJA_VERSION = '3.1.6'
from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'guide.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_marker = resolve('marker')
    l_0_title = resolve('title')
    l_0_reverted_note = resolve('reverted_note')
    l_0_summary = resolve('summary')
    l_0_summary_extra = resolve('summary_extra')
    l_0_breaking = resolve('breaking')
    l_0_verdict = resolve('verdict')
    l_0_notices = resolve('notices')
    l_0_history = resolve('history')
    l_0_top_focus = resolve('top_focus')
    l_0_h = resolve('h')
    l_0_more = resolve('more')
    l_0_audience = resolve('audience')
    l_0_top_factors = resolve('top_factors')
    l_0_more_focus = resolve('more_focus')
    l_0_housekeeping = resolve('housekeeping')
    l_0_changed_rows = resolve('changed_rows')
    l_0_col = resolve('col')
    l_0_changed_notes = resolve('changed_notes')
    l_0_file_lines = resolve('file_lines')
    l_0_files_more = resolve('files_more')
    l_0_test_lines = resolve('test_lines')
    l_0_dep_lines = resolve('dep_lines')
    l_0_review_lines = resolve('review_lines')
    l_0_follow_lines = resolve('follow_lines')
    l_0_label_lines = resolve('label_lines')
    l_0_factor_lines = resolve('factor_lines')
    l_0_footer = resolve('footer')
    try:
        t_1 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    pass
    yield str((undefined(name='marker') if l_0_marker is missing else l_0_marker))
    yield '\n### 📖 '
    yield str((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '\n'
    if (undefined(name='reverted_note') if l_0_reverted_note is missing else l_0_reverted_note):
        pass
        yield '\n> [!WARNING]\n> '
        yield str((undefined(name='reverted_note') if l_0_reverted_note is missing else l_0_reverted_note))
        yield '\n'
    yield '\n**'
    yield str((undefined(name='summary') if l_0_summary is missing else l_0_summary))
    yield '**'
    yield str((str_join((' ', (undefined(name='summary_extra') if l_0_summary_extra is missing else l_0_summary_extra), )) if (undefined(name='summary_extra') if l_0_summary_extra is missing else l_0_summary_extra) else ''))
    yield '\n'
    if (undefined(name='breaking') if l_0_breaking is missing else l_0_breaking):
        pass
        yield '\n**'
        yield str((undefined(name='breaking') if l_0_breaking is missing else l_0_breaking))
        yield '**\n'
    yield '\n'
    yield str((undefined(name='verdict') if l_0_verdict is missing else l_0_verdict))
    yield '\n'
    if (undefined(name='notices') if l_0_notices is missing else l_0_notices):
        pass
        yield '\n> [!NOTE]\n'
        for l_1_n in (undefined(name='notices') if l_0_notices is missing else l_0_notices):
            _loop_vars = {}
            pass
            yield '> '
            yield str(l_1_n)
            yield '\n'
        l_1_n = missing
    for l_1_line in (undefined(name='history') if l_0_history is missing else l_0_history):
        _loop_vars = {}
        pass
        yield '\n'
        yield str(l_1_line)
        yield '\n'
    l_1_line = missing
    if (undefined(name='top_focus') if l_0_top_focus is missing else l_0_top_focus):
        pass
        yield '\n#### '
        yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'focus'))
        yield '\n'
        l_1_loop = missing
        for l_1_p, l_1_loop in LoopContext((undefined(name='top_focus') if l_0_top_focus is missing else l_0_top_focus), undefined):
            _loop_vars = {}
            pass
            yield str(environment.getattr(l_1_loop, 'index'))
            yield '. '
            yield str(l_1_p)
            yield '\n'
        l_1_loop = l_1_p = missing
    yield '\n<details><summary>'
    yield str((undefined(name='more') if l_0_more is missing else l_0_more))
    yield '</summary>\n'
    if ((undefined(name='audience') if l_0_audience is missing else l_0_audience) or (undefined(name='top_factors') if l_0_top_factors is missing else l_0_top_factors)):
        pass
        yield '\n'
        if (undefined(name='audience') if l_0_audience is missing else l_0_audience):
            pass
            yield str((undefined(name='audience') if l_0_audience is missing else l_0_audience))
            if (undefined(name='top_factors') if l_0_top_factors is missing else l_0_top_factors):
                pass
                yield '\\\n'
        if (undefined(name='top_factors') if l_0_top_factors is missing else l_0_top_factors):
            pass
            yield str((undefined(name='top_factors') if l_0_top_factors is missing else l_0_top_factors))
            yield '\n'
    if (undefined(name='more_focus') if l_0_more_focus is missing else l_0_more_focus):
        pass
        yield '\n#### '
        yield str((environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'focus_more') if (undefined(name='top_focus') if l_0_top_focus is missing else l_0_top_focus) else environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'focus')))
        yield '\n'
        l_1_loop = missing
        for l_1_p, l_1_loop in LoopContext((undefined(name='more_focus') if l_0_more_focus is missing else l_0_more_focus), undefined):
            _loop_vars = {}
            pass
            yield str((environment.getattr(l_1_loop, 'index') + t_1((undefined(name='top_focus') if l_0_top_focus is missing else l_0_top_focus))))
            yield '. '
            yield str(l_1_p)
            yield '\n'
        l_1_loop = l_1_p = missing
    if (undefined(name='housekeeping') if l_0_housekeeping is missing else l_0_housekeeping):
        pass
        yield '\n'
        yield str((undefined(name='housekeeping') if l_0_housekeeping is missing else l_0_housekeeping))
        yield '\n'
    yield '\n#### '
    yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'changed'))
    yield '\n'
    if (undefined(name='changed_rows') if l_0_changed_rows is missing else l_0_changed_rows):
        pass
        yield '| '
        yield str(environment.getattr((undefined(name='col') if l_0_col is missing else l_0_col), 'area'))
        yield ' | '
        yield str(environment.getattr((undefined(name='col') if l_0_col is missing else l_0_col), 'kind'))
        yield ' | '
        yield str(environment.getattr((undefined(name='col') if l_0_col is missing else l_0_col), 'files'))
        yield ' | + | − |\n| --- | --- | ---: | ---: | ---: |\n'
        for l_1_r in (undefined(name='changed_rows') if l_0_changed_rows is missing else l_0_changed_rows):
            _loop_vars = {}
            pass
            yield '| '
            yield str(environment.getattr(l_1_r, 'area'))
            yield ' | '
            yield str(environment.getattr(l_1_r, 'kind'))
            yield ' | '
            yield str(environment.getattr(l_1_r, 'files'))
            yield ' | '
            yield str(environment.getattr(l_1_r, 'additions'))
            yield ' | '
            yield str(environment.getattr(l_1_r, 'deletions'))
            yield ' |\n'
        l_1_r = missing
    for l_1_line in (undefined(name='changed_notes') if l_0_changed_notes is missing else l_0_changed_notes):
        _loop_vars = {}
        pass
        yield '\n'
        yield str(l_1_line)
        yield '\n'
    l_1_line = missing
    if (undefined(name='file_lines') if l_0_file_lines is missing else l_0_file_lines):
        pass
        yield '\n<details><summary>'
        yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'files'))
        yield '</summary>\n\n'
        for l_1_line in (undefined(name='file_lines') if l_0_file_lines is missing else l_0_file_lines):
            _loop_vars = {}
            pass
            yield '- '
            yield str(l_1_line)
            yield '\n'
        l_1_line = missing
        if (undefined(name='files_more') if l_0_files_more is missing else l_0_files_more):
            pass
            yield '- '
            yield str((undefined(name='files_more') if l_0_files_more is missing else l_0_files_more))
            yield '\n'
        yield '\n</details>\n'
    if (undefined(name='test_lines') if l_0_test_lines is missing else l_0_test_lines):
        pass
        yield '\n#### '
        yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'tests'))
        yield '\n'
        for l_1_line in (undefined(name='test_lines') if l_0_test_lines is missing else l_0_test_lines):
            _loop_vars = {}
            pass
            yield '- '
            yield str(l_1_line)
            yield '\n'
        l_1_line = missing
    if (undefined(name='dep_lines') if l_0_dep_lines is missing else l_0_dep_lines):
        pass
        yield '\n#### '
        yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'deps'))
        yield '\n'
        for l_1_line in (undefined(name='dep_lines') if l_0_dep_lines is missing else l_0_dep_lines):
            _loop_vars = {}
            pass
            yield '- '
            yield str(l_1_line)
            yield '\n'
        l_1_line = missing
    if (undefined(name='review_lines') if l_0_review_lines is missing else l_0_review_lines):
        pass
        yield '\n#### '
        yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'review'))
        yield '\n'
        for l_1_line in (undefined(name='review_lines') if l_0_review_lines is missing else l_0_review_lines):
            _loop_vars = {}
            pass
            yield '- '
            yield str(l_1_line)
            yield '\n'
        l_1_line = missing
    if (undefined(name='follow_lines') if l_0_follow_lines is missing else l_0_follow_lines):
        pass
        yield '\n#### '
        yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'follow'))
        yield '\n'
        for l_1_line in (undefined(name='follow_lines') if l_0_follow_lines is missing else l_0_follow_lines):
            _loop_vars = {}
            pass
            yield '- '
            yield str(l_1_line)
            yield '\n'
        l_1_line = missing
    if (undefined(name='label_lines') if l_0_label_lines is missing else l_0_label_lines):
        pass
        yield '\n#### '
        yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'labels'))
        yield '\n'
        for l_1_line in (undefined(name='label_lines') if l_0_label_lines is missing else l_0_label_lines):
            _loop_vars = {}
            pass
            yield '- '
            yield str(l_1_line)
            yield '\n'
        l_1_line = missing
    yield '\n#### '
    yield str(environment.getattr((undefined(name='h') if l_0_h is missing else l_0_h), 'score'))
    yield '\n'
    for l_1_line in (undefined(name='factor_lines') if l_0_factor_lines is missing else l_0_factor_lines):
        _loop_vars = {}
        pass
        yield '- '
        yield str(l_1_line)
        yield '\n'
    l_1_line = missing
    yield '\n<sub>'
    yield str((undefined(name='footer') if l_0_footer is missing else l_0_footer))
    yield '</sub>\n\n</details>\n'

blocks = {}
debug_info = '1=45&2=47&3=49&6=52&9=55&10=59&12=62&15=65&16=67&19=70&20=74&23=77&25=81&27=84&29=87&30=90&31=93&35=99&36=101&38=104&40=110&43=114&45=117&46=120&47=123&50=128&52=131&55=134&56=136&57=139&59=145&60=149&63=160&65=164&67=167&69=170&71=172&72=176&74=179&75=182&80=185&82=188&83=190&84=194&87=197&89=200&90=202&91=206&94=209&96=212&97=214&98=218&101=221&103=224&104=226&105=230&108=233&110=236&111=238&112=242&116=246&117=248&118=252&121=256'
