"""Timeline dates: eval_timeline.py's reading (dateutil, %W weeks, the reference date) and ISO 8601 intervals."""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta

import pytest
from dateutil import parser
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.timex import IsoScale, ScriptScale, TimexError, iso_interval, script_read
from nlpbench.model.timelines import Mode

NOV_21 = date(2026, 11, 21)


@pytest.mark.parametrize(
    ("value", "reference", "read_as"),
    [
        ("2013-05-12", NOV_21, datetime(2013, 5, 12)),
        ("2013-05", NOV_21, datetime(2013, 5, 21)),  # the day from the reference date
        ("2013", NOV_21, datetime(2013, 11, 21)),  # month and day from it
        ("2013-02", date(2026, 1, 31), datetime(2013, 2, 28)),  # a day the month lacks is clipped
        ("2013", date(2024, 2, 29), datetime(2013, 2, 28)),
        ("2013-W05", NOV_21, datetime(2013, 2, 4)),  # %W: week 1 starts on 2013's first Monday, Jan 7
        ("2013-w5", NOV_21, datetime(2013, 2, 4)),
        ("2024-W05", NOV_21, datetime(2024, 1, 29)),  # 2024 starts on a Monday: here %W agrees with ISO
        ("2015-W10", NOV_21, datetime(2015, 3, 9)),  # ISO says 2015-03-02
        ("2013-W00", NOV_21, datetime(2012, 12, 31)),
        ("2013-W53", NOV_21, datetime(2014, 1, 6)),
        ("2013-05-12T10:00", NOV_21, datetime(2013, 5, 12, 10, 0)),
        ("5/12/2013", NOV_21, datetime(2013, 5, 12)),
        ("12-05-2013", NOV_21, datetime(2013, 12, 5)),  # month first
        ("13", NOV_21, datetime(2026, 11, 13)),  # a day
    ],
)
def test_script_reading_as_observed_with_dateutil_2_8_2(value, reference, read_as):
    assert ScriptScale(Mode.day, reference).reading(value)[0] == read_as


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("2013-SU", "ParserError: Unknown string format: 2013-SU"),
        ("PRESENT_REF", "ParserError: Unknown string format: PRESENT_REF"),
        ("", "ParserError: String does not contain a date"),
        ("2013-WI", "ValueError: time data '2013-WI-1' does not match format '%Y-W%W-%w'"),
        ("2013-W05-3", "ValueError: unconverted data remains: -1 (it reads weeks as YYYY-Www only"),
        ("2013-W54", "ValueError: time data '2013-W54-1' does not match format"),
        ("2013-02-30", "ParserError: day is out of range for month: 2013-02-30"),
        ("2013-13", "ParserError: bad month number 13; must be 1-12: 2013-13"),
    ],
)
def test_values_the_script_stops_on(value, error):
    with pytest.raises(TimexError) as raised:
        ScriptScale(Mode.strict, NOV_21).keyed([("taxol", "contains-1", value)])
    assert raised.value.value == value
    assert f"eval_timeline.py cannot read it and stops with {error}" in str(raised.value)


days = st.dates(date(1000, 1, 1), date(9999, 12, 31))


@given(days, st.integers(0, 14), st.integers(0, 32), st.sampled_from(["year", "month", "day", "minute", "second"]),
       st.integers(0, 25), st.integers(0, 61), days)  # fmt: skip
def test_the_fast_reading_is_dateutils(day, month, day_of_month, shape, hour, minute, reference):
    value = {
        "year": f"{day.year}",
        "month": f"{day.year}-{month:02d}",
        "day": f"{day.year}-{month:02d}-{day_of_month:02d}",
        "minute": f"{day.isoformat()}T{hour:02d}:{minute:02d}",
        "second": f"{day.isoformat()}T{hour:02d}:{minute:02d}:{minute:02d}",
    }[shape]
    default = datetime(reference.year, reference.month, reference.day)
    try:
        expected = parser.parse(value, default=default)
    except ValueError:
        with pytest.raises(TimexError):
            script_read(value, default)
    else:
        assert script_read(value, default) == expected


@given(days, st.sampled_from(["{y}", "{y}-{m:02d}", "{y}-{m:02d}-{d:02d}", "{y}-{m:02d}-{d:02d}T10:30"]), days)
def test_the_fields_taken_from_the_reference_date_are_those_a_second_default_changes(day, shape, reference):
    value = shape.format(y=day.year, m=day.month, d=day.day)
    scale = ScriptScale(Mode.day, reference)
    point, filled = scale.reading(value)
    other = datetime(1 if reference.year > 1 else 2, 1 if reference.month > 1 else 2, 1 if reference.day > 1 else 2)
    probe = parser.parse(value, default=other)
    assert set(filled) == {f for f in ("year", "month", "day") if getattr(point, f) != getattr(probe, f)}


def test_month_and_year_keys_and_what_the_reference_date_filled():
    month = ScriptScale(Mode.month, NOV_21)
    assert month.keyed([("t", "l", "2013-05-12"), ("t", "l", "2014"), ("t", "l", "2013-W05")]) == [
        ("t", "l", "2013-05"), ("t", "l", "2014-11"), ("t", "l", "2013-02"),
    ]  # fmt: skip
    assert month.completed == {"2014": datetime(2014, 11, 21)}  # its month came from the reference date
    assert month.span("2013-05") == (datetime(2013, 5, 21), datetime(2013, 5, 21))
    assert "2013-05" in month.completed
    year = ScriptScale(Mode.year, NOV_21)
    assert year.keyed([("t", "l", "2013-05-12")]) == [("t", "l", "2013")]
    assert year.completed == {}


def test_strict_and_day_compare_values_as_written():
    tuples = [("taxol", "contains-1", "2013-05-12T10:00")]
    assert ScriptScale(Mode.strict, NOV_21).keyed(tuples) is tuples


@pytest.mark.parametrize(
    ("value", "first", "last"),
    [
        ("2013-05-12", date(2013, 5, 12), date(2013, 5, 12)),
        ("2013-05-12T10:00Z", date(2013, 5, 12), date(2013, 5, 12)),
        ("2013-05-12TMO", date(2013, 5, 12), date(2013, 5, 12)),
        ("2013-02", date(2013, 2, 1), date(2013, 2, 28)),
        ("2012-02", date(2012, 2, 1), date(2012, 2, 29)),
        ("2013", date(2013, 1, 1), date(2013, 12, 31)),
        ("2013-W05", date(2013, 1, 28), date(2013, 2, 3)),
        ("2013-w05", date(2013, 1, 28), date(2013, 2, 3)),
        ("2013-W05-3", date(2013, 1, 30), date(2013, 1, 30)),
        ("2015-W53", date(2015, 12, 28), date(2016, 1, 3)),
        ("2013-SP", date(2013, 3, 1), date(2013, 5, 31)),
        ("2013-SU", date(2013, 6, 1), date(2013, 8, 31)),
        ("2013-FA", date(2013, 9, 1), date(2013, 11, 30)),
        ("2013-WI", date(2013, 12, 1), date(2014, 2, 28)),
        ("2013-Q2", date(2013, 4, 1), date(2013, 6, 30)),
        ("2013-H2", date(2013, 7, 1), date(2013, 12, 31)),
    ],
)
def test_iso_intervals(value, first, last):
    assert iso_interval(value) == (first, last)


@pytest.mark.parametrize(
    "value", ["2013-02-30", "2013-13", "2013-00", "2013-W54", "2013-W53", "2013-W05-8", "13", "PRESENT_REF"]
)
def test_what_is_no_iso_date(value):
    with pytest.raises(TimexError, match="not"):
        iso_interval(value)


@given(days)
def test_an_iso_week_is_the_monday_to_sunday_that_holds_its_days(day):
    year, week, weekday = day.isocalendar()
    first, last = iso_interval(f"{year}-W{week:02d}")
    assert first <= day <= last and first.weekday() == 0 and last - first == timedelta(days=6)
    assert iso_interval(f"{year}-W{week:02d}-{weekday}") == (day, day)


@given(days)
def test_a_month_interval_covers_the_whole_month(day):
    first, last = iso_interval(f"{day.year}-{day.month:02d}")
    assert (first.day, last.day) == (1, calendar.monthrange(day.year, day.month)[1])


def test_iso_units_per_mode():
    week = "2024-W05"  # Monday 29 January to Sunday 4 February
    assert IsoScale(Mode.month).keyed([("t", "l", week)]) == [("t", "l", (2024 * 12, 2024 * 12 + 1))]
    assert list(IsoScale(Mode.month).units((2024 * 12, 2024 * 12 + 1))) == [2024 * 12, 2024 * 12 + 1]
    assert IsoScale(Mode.year).keyed([("t", "l", week)]) == [("t", "l", (2024, 2024))]
    day_key = IsoScale(Mode.day).keyed([("t", "l", week)])[0][2]
    assert len(IsoScale(Mode.day).units(day_key)) == 7
    assert IsoScale(Mode.strict).exact and not IsoScale(Mode.day).exact
