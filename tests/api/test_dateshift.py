"""Dates shifted by a number of days and written back in their own format."""

from __future__ import annotations

import pytest

from nlpbench.toolapi.dateshift import DateOutOfRange, shift_date


@pytest.mark.parametrize(
    ("text", "days", "date_format", "expected"),
    [
        ("1 January 2020", 2128, None, "29 October 2025"),
        ("12/26/2020", 1, "MM/DD/YYYY", "12/27/2020"),
        ("12/31/2020", 1, "MM/DD/YYYY", "01/01/2021"),
        ("12/31/2020", 1, "M/D/YYYY", "1/1/2021"),
        ("1/2/2020", 30, None, "2/1/2020"),
        ("04/21/69", 10, None, "05/01/69"),
        ("2069-04-07", -7, None, "2069-03-31"),
        ("31.12.2020", 1, "DD.MM.YYYY", "01.01.2021"),
        ("13/02/2020", 1, None, "14/02/2020"),  # 13 cannot be a month: day first
        ("03/02/2020", 1, "DD/MM/YYYY", "04/02/2020"),
        ("March 3rd, 2069", 19, None, "March 22nd, 2069"),
        ("March 3rd, 2069", 18, None, "March 21st, 2069"),
        ("MARCH 3RD, 2069", 8, None, "MARCH 11TH, 2069"),
        ("3 Mar 69", 30, None, "2 Apr 69"),
        ("Sept 9", 1, None, "Sept 10"),
        ("Sept 9", -10, None, "Aug 30"),
        ("Aug. 30, 2013", 2, None, "Sep. 1, 2013"),
        ("the 3rd of march", 1, None, "the 4th of march"),
        ("Feb 28", 1, None, "Feb 29"),  # month and day: a leap reference year
        ("Monday, December 12, 2013", 1, None, "Friday, December 13, 2013"),  # weekday recomputed
        ("Monday", 3, None, "Thursday"),
        ("MON", -1, None, "SUN"),
        ("Mar-2069", 20, None, "Apr-2069"),  # month and year: the 15th moves
        ("12/2069", 20, None, "01/2070"),
        ("2069", 184, None, "2070"),  # a year alone: 1 July moves
        ("2069", 183, None, "2069"),
        ("December", 17, None, "January"),
        ("'69", 0, None, None),
    ],
)
def test_shift(text, days, date_format, expected):
    assert shift_date(text, days, date_format) == expected


@pytest.mark.parametrize(
    "text", ["yesterday", "Christmas", "spring 2069", "9/31/2020", "Feb 30", "12", "1/2/3/4", "5 mg"]
)
def test_what_is_not_a_date_is_none(text):
    assert shift_date(text, 1) is None


def test_zero_days_is_the_identity():
    for text in ("12/26/2020", "March 3rd, 2069", "3 Mar 69", "2069-04-07", "Monday"):
        assert shift_date(text, 0) == text


def test_beyond_year_9999_is_an_error():
    with pytest.raises(DateOutOfRange, match="outside the years"):
        shift_date("12/31/9999", 1)
    with pytest.raises(DateOutOfRange):
        shift_date("2020", -(10**12))
