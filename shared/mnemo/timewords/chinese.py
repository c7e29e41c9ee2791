"""The Chinese expressions: their words and numerals, one pattern, what a match means given today,
and when a month in Chinese numerals is part of another word."""

from __future__ import annotations

import re
from datetime import date, timedelta

from mnemo.timewords import days as cal
from mnemo.timewords.days import Days, Meaning


def cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_NUMBER = r"\d{1,3}|[零〇一二两三四五六七八九十]{1,3}"
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_CN_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}


def _cn_int(token: str) -> int | None:
    """A number written in digits or in Chinese (up to 99): 3, 三, 十二, 二十, 二十五."""
    if token.isdigit():
        return int(token)
    if "十" in token:
        tens, _, ones = token.partition("十")
        if "十" in ones:
            return None
        high = _CN_DIGITS.get(tens, -1) if tens else 1
        low = _CN_DIGITS.get(ones, -1) if ones else 0
        return None if high < 0 or low < 0 else high * 10 + low
    if len(token) != 1:
        return None
    return _CN_DIGITS.get(token)


_CN_POINT = (
    r"(?P<crel>今天|今日|今早|今晚|昨天|昨日|昨晚|前天|大前天)"
    r"|(?P<cwk>上上周|上周|本周|这周|上个?星期|这个?星期|本星期|上个?礼拜|这个?礼拜|下周)"
    r"(?:(?P<cwkd>[一二三四五六日天末]))?"
    r"|(?P<cmo>上上个月|上个月|上月|本月|这个月|这月)"
    r"|(?P<cyr>今年|去年|前年)"
    rf"|(?:(?P<cy>\d{{4}})年)?(?P<cm>{_CN_NUMBER})月份?(?:(?P<cd>{_CN_NUMBER})[日号])?"
    r"|(?P<cyo>\d{4})年"
    r"|(?:周|星期|礼拜)(?P<cwd>[一二三四五六日天])"
)
PATTERN = re.compile(
    rf"(?P<cnsince>自从|自|从)?(?P<cpoint>{_CN_POINT})(?P<ctail>以来|之后|以后|起|开始|之前|以前)?"
    rf"|(?P<cn>{_CN_NUMBER})(?P<cunit>天|日|周|个?星期|个?礼拜|个?月|年)(?P<cago>前|之前|以前)"
    rf"|(?:最近|过去|近|前)(?P<cln>{_CN_NUMBER})(?P<clunit>天|日|周|个?星期|个?礼拜|个?月|年)(?:内|里|以来|来)?"
)


def _cn_unit(token: str) -> str:
    return _CN_UNITS[token.removeprefix("个")]


def _cn_point(g: dict[str, str | None], today: date) -> Days | None:
    if crel := g.get("crel"):
        back = {"今天": 0, "今日": 0, "今早": 0, "今晚": 0, "昨天": 1, "昨日": 1, "昨晚": 1, "前天": 2, "大前天": 3}
        return cal.day(today - timedelta(days=back[crel]))
    if cwk := g.get("cwk"):
        shift = -2 if cwk.startswith("上上") else -1 if cwk.startswith("上") else 1 if cwk.startswith("下") else 0
        start = cal.week(today)[0] + timedelta(days=7 * shift)
        if wd := g.get("cwkd"):
            return (
                cal.day(start + timedelta(days=_CN_WEEKDAY[wd]))
                if wd != "末"
                else (start + timedelta(days=5), start + timedelta(days=7))
            )
        return start, start + timedelta(days=7)
    if cmo := g.get("cmo"):
        shift = -2 if cmo.startswith("上上") else -1 if cmo.startswith("上") else 0
        return cal.days_of_month(today.year, today.month + shift)
    if cyr := g.get("cyr"):
        return cal.days_of_year(today.year - {"今年": 0, "去年": 1, "前年": 2}[cyr])
    if cm := g.get("cm"):
        month = _cn_int(cm)
        if month is None or not 1 <= month <= 12:
            return None
        cy = g.get("cy")
        year = int(cy) if cy else None
        if cd := g.get("cd"):
            day = _cn_int(cd)
            if day is None:
                return None
            y = year if year is not None else today.year
            try:
                d = date(y, month, day)
                if year is None and d > today:
                    d = date(y - 1, month, day)
            except ValueError:
                return None
            return cal.day(d)
        return cal.past_month(today, month, year)
    if cyo := g.get("cyo"):
        return cal.days_of_year(int(cyo))
    if cwd := g.get("cwd"):
        return cal.past_weekday(today, _CN_WEEKDAY[cwd])
    return None


def meaning(m: re.Match[str], today: date) -> Meaning | None:
    g = m.groupdict()
    if cn := g.get("cn"):
        n = _cn_int(cn)
        return None if n is None or n > 1000 else (cal.ago(today, _cn_unit(g["cunit"]), n), "both")
    if cln := g.get("cln"):
        n = _cn_int(cln)
        return None if n is None or n < 1 or n > 1000 else (cal.last_n(today, _cn_unit(g["clunit"]), n), "both")
    point = _cn_point(g, today)
    if point is None:
        return None
    tail = g.get("ctail") or ""
    if tail in ("以来", "起", "开始", "之后", "以后") or g.get("cnsince"):
        return point, "since"
    if tail in ("之前", "以前"):
        return point, "before"
    return point, "both"


#: characters that may stand right before a month written in Chinese numerals (三月) without
#: making it part of another word (统一月报, 单一月份): particles, prepositions, time words
_CN_BEFORE_MONTH = set("的在于从自到至和与及是们年去今前上本这了说将那每、，。：；（ ")


def month_in_word(query: str, m: re.Match[str]) -> bool:
    cm = m.groupdict().get("cm")
    if not cm or cm.isdigit() or m.groupdict().get("cy") or m.groupdict().get("cnsince"):
        return False
    before = query[m.start() - 1] if m.start() > 0 else " "
    return cjk(before) and before not in _CN_BEFORE_MONTH
