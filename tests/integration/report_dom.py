"""What a page of `optune report` holds, read as a browser's DOM would be (html.parser), printed as
JSON for report_cli_test.cpp to check against the database: per task its points (role, error
kind, trial), its best-so-far line, its baseline, its tick labels and axis titles, its table of
records that are not ok, its note; the summary table's rows; and anything that would reach
outside the page (scripts, remote sources)."""
import json
import sys
from html.parser import HTMLParser


class ReportDom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.page = {"tasks": [], "summary": [], "scripts": 0, "remote": [], "style": "", "config_cells": 0,
                     "source": ""}
        self.task = None
        self.capture = None  # (kind, element) of the text being read
        self.text = ""
        self.in_summary = False
        self.in_not_ok = False
        self.row = None
        self.cell_classes = []
        self.open_tags = []

    def start_capture(self, kind):
        self.capture = kind
        self.text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        for name in ("src", "href"):
            if a.get(name, "").startswith(("http:", "https:", "//")):
                self.page["remote"].append(a[name])
        if tag == "script":
            self.page["scripts"] += 1
        elif tag == "style":
            self.start_capture("style")
        elif tag == "h2":
            ident = a.get("id", "")
            self.task = None
            if ident.startswith("task"):
                self.task = {"id": ident, "heading": "", "metric": None, "points": [], "best_so_far": [],
                             "baselines": [], "x_ticks": [], "y_ticks": [], "x_title": "", "y_title": "",
                             "not_ok": {}, "note": None, "best": None, "headline_rings": 0}
                self.page["tasks"].append(self.task)
                self.start_capture("heading")
        elif tag == "p" and "source" in classes:
            self.start_capture("source")
        elif tag == "table":
            self.in_summary = "summary" in classes
            self.in_not_ok = "not-ok" in classes
        elif tag == "tr":
            self.row = []
            self.cell_classes = []
        elif tag in ("td", "th") and self.row is not None:
            self.start_capture("cell")
            self.cell_classes.append(classes)
            if "config" in classes:
                self.page["config_cells"] += 1
        elif self.task is None:
            pass
        elif tag == "svg":
            self.task["metric"] = a.get("data-metric")
        elif "point" in classes:
            self.task["points"].append({"role": a.get("data-role"), "kind": a.get("data-kind"),
                                        "trial": int(a.get("data-trial")), "shape": tag})
        elif "headline" in classes:
            self.task["headline_rings"] += 1
        elif tag == "polyline" and "best-so-far" in classes:
            self.task["best_so_far"] = [[float(v) for v in p.split(",")] for p in a["points"].split()]
        elif tag == "line" and "baseline" in classes:
            self.task["baselines"].append({"y": float(a["y1"]), "label": None})
        elif tag == "text" and classes:
            self.start_capture(classes[0] if classes[0] != "axis-title" else classes[1])
        elif tag == "p" and "note" in classes:
            self.start_capture("note")
        elif tag == "p" and "best" in classes:
            self.start_capture("best")

    def handle_data(self, data):
        if self.capture:
            self.text += data

    def handle_endtag(self, tag):
        kind, text = self.capture, self.text.strip()
        if tag == "style" and kind == "style":
            self.page["style"] = text
        elif tag in ("td", "th") and kind == "cell":
            self.row.append(text)
        elif tag == "tr" and self.row is not None:
            if self.in_summary and self.row and self.cell_classes[0] and "key" in self.cell_classes[0]:
                self.page["summary"].append(self.row)
            if self.in_not_ok and self.task is not None and self.cell_classes and "kind" in self.cell_classes[0]:
                self.task["not_ok"][self.row[0].split()[-1]] = int(self.row[1])
            self.row = None
        elif tag == "table":
            self.in_summary = self.in_not_ok = False
        elif tag == "h2" and kind == "heading":
            self.task["heading"] = text
        elif tag == "p" and kind == "source":
            self.page["source"] = text
        elif self.task is not None and tag == "text" and kind:
            if kind == "tick-x":
                self.task["x_ticks"].append(text)
            elif kind == "tick-y":
                self.task["y_ticks"].append(text)
            elif kind == "axis-x":
                self.task["x_title"] = text
            elif kind == "axis-y":
                self.task["y_title"] = text
            elif kind == "baseline-label" and self.task["baselines"]:
                self.task["baselines"][-1]["label"] = text
        elif self.task is not None and tag == "p" and kind in ("note", "best"):
            self.task[kind] = text
        else:
            return
        self.capture = None


def main():
    dom = ReportDom()
    with open(sys.argv[1], encoding="utf-8") as page:
        dom.feed(page.read())
    dom.close()
    json.dump(dom.page, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
