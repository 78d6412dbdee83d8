"""opscope._opscope.report(format="html"): the HTML page of `opscope report --format html`
(docs/html-report.md), the page's own tables included, on the H200 recording in tests/data."""
import json
import os

from opscope import _opscope

TRACE = os.path.join(os.path.dirname(__file__), "..", "data", "h200", "train.opscope")
TAG = '<script type="application/json" id="opscope-data">'


def test_html_page_with_its_own_tables():
    page = _opscope.report(TRACE, format="html")
    assert page.startswith("<!DOCTYPE html>")
    data = json.loads(page.split(TAG, 1)[1].split("</script>", 1)[0])
    titles = [t["title"] for t in data["tables"]]
    # the page's timeline tables, which text, CSV and JSON leave out
    assert "Timeline" in titles and "Timeline: Steps" in titles
    # and the JSON report's tables, the same rows
    report = json.loads(_opscope.report(TRACE, format="json"))
    kernel = [t for t in report["tables"] if t["title"] == "Kernel Summary"][0]
    assert [t for t in data["tables"] if t["title"] == "Kernel Summary"][0] == kernel


def test_bad_format_names_html():
    try:
        _opscope.report(TRACE, format="htm")
    except ValueError as e:
        assert "text, csv, json or html" in str(e)
    else:
        raise AssertionError("format htm accepted")
