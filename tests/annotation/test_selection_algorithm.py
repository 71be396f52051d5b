"""The greedy image selection (seed 000, sec. 2.2) on small pools where the right answer is known."""

from __future__ import annotations

import random

import pytest

from annotation.selection.algorithm import Area, Candidate, select_images

IN, BD, JP, BR, DE = "IN", "BD", "JP", "BR", "DE"


def images(start: int, n: int, country=None, region=None, continent=None) -> list[Candidate]:
    return [Candidate(start + i, country, region, continent) for i in range(n)]


def telugu_area() -> Area:
    return Area(
        regions=frozenset({(IN, "Telangana"), (IN, "Andhra Pradesh")}),
        countries=frozenset({IN}),
        continents=frozenset({"Asia"}),
    )


def bengali_area() -> Area:
    return Area(
        regions=frozenset({(IN, "West Bengal")}),
        whole_countries=frozenset({BD}),
        countries=frozenset({IN, BD}),
        continents=frozenset({"Asia"}),
    )


def hindi_area() -> Area:
    return Area(
        regions=frozenset({(IN, "West Bengal"), (IN, "Telangana"), (IN, "Uttar Pradesh")}),
        countries=frozenset({IN}),
        continents=frozenset({"Asia"}),
    )


def backoff_pool() -> list[Candidate]:
    return [
        *images(1, 2, IN, "Telangana", "Asia"),
        *images(10, 3, IN, "Kerala", "Asia"),
        *images(20, 4, JP, "Tokyo", "Asia"),
        *images(30, 10, BR, "Bahia", "South America"),
        *images(50, 2),  # no coordinates
    ]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (2, {"region": 2, "country": 0, "continent": 0, "global": 0}),
        (4, {"region": 2, "country": 2, "continent": 0, "global": 0}),
        (8, {"region": 2, "country": 3, "continent": 3, "global": 0}),
        (15, {"region": 2, "country": 3, "continent": 4, "global": 6}),
    ],
)
def test_backs_off_region_then_country_then_continent_then_anywhere(target, expected):
    result = select_images(backoff_pool(), {"te": telugu_area()}, per_language=target, seed=1).results[0]
    assert result.counts == expected
    assert result.shortfall == 0
    levels = dict(result.picks)
    assert {levels[i] for i in (1, 2)} == {"region"}
    assert {i for i, lv in result.picks if lv == "country"} <= {10, 11, 12}
    assert {i for i, lv in result.picks if lv == "continent"} <= {20, 21, 22, 23}
    # The levels come in order: every region pick before every country pick, and so on.
    order = ["region", "country", "continent", "global"]
    assert [order.index(lv) for _, lv in result.picks] == sorted(order.index(lv) for _, lv in result.picks)


def test_images_without_coordinates_serve_only_the_global_level():
    pool = backoff_pool()
    result = select_images(pool, {"te": telugu_area()}, per_language=len(pool), seed=3).results[0]
    unplaced = {50, 51}
    assert all(level == "global" for image_id, level in result.picks if image_id in unplaced)
    assert unplaced <= {image_id for image_id, _ in result.picks}


def hindi_pool() -> list[Candidate]:
    return [
        *images(1, 3, IN, "West Bengal", "Asia"),
        *images(10, 3, IN, "Telangana", "Asia"),
        *images(40, 10, DE, "Bavaria", "Europe"),
    ]


def test_smallest_pool_first_the_hindi_case():
    """Bengali and Telugu (3 in-area images each) are served before Hindi (6): they keep their regions
    and Hindi's in-region images with them; India has no other image and Asia none either, so every
    Hindi image is global, as in the paper."""
    areas = {"hi": hindi_area(), "bn": bengali_area(), "te": telugu_area()}
    result = select_images(hindi_pool(), areas, per_language=3, seed=7)
    assert [r.language for r in result.results] == ["bn", "te", "hi"]
    by = result.by_language()
    assert (by["bn"].pool, by["te"].pool, by["hi"].pool) == (3, 3, 6)
    assert by["bn"].counts == {"region": 3, "country": 0, "continent": 0, "global": 0}
    assert by["te"].counts == {"region": 3, "country": 0, "continent": 0, "global": 0}
    assert by["hi"].counts == {"region": 0, "country": 0, "continent": 0, "global": 3}
    assert {i for i, _ in by["hi"].picks} <= set(range(40, 50))


def test_smallest_pool_first_changes_the_outcome():
    """Served first, Hindi (the largest pool) would take in-region images that Bengali and Telugu have
    nowhere else: together they would keep at most 3 in-region images instead of 6."""
    pool = hindi_pool()
    hindi_first = select_images(pool, {"hi": hindi_area()}, per_language=3, seed=7).results[0]
    taken = {i for i, _ in hindi_first.picks}
    rest = [c for c in pool if c.image_id not in taken]
    after = select_images(
        rest, {"bn": bengali_area(), "te": telugu_area()}, per_language=3, seed=7
    ).by_language()
    assert hindi_first.counts["region"] == 3
    assert after["bn"].counts["region"] + after["te"].counts["region"] <= 3

    areas = {"hi": hindi_area(), "bn": bengali_area(), "te": telugu_area()}
    smallest_first = select_images(pool, areas, per_language=3, seed=7).by_language()
    assert smallest_first["bn"].counts["region"] + smallest_first["te"].counts["region"] == 6


def test_persian_backs_off_to_its_continent():
    """Like Persian in XM3600: too few images in Iran and Afghanistan, the rest from Asia."""
    fa = Area(
        whole_countries=frozenset({"IR", "AF"}),
        countries=frozenset({"IR", "AF"}),
        continents=frozenset({"Asia"}),
    )
    pool = [
        *images(1, 86, "IR", "Tehran", "Asia"),
        *images(100, 30, JP, "Tokyo", "Asia"),
        *images(200, 50, DE),
    ]
    result = select_images(pool, {"fa": fa}, per_language=100, seed=0).results[0]
    assert result.counts == {"region": 86, "country": 0, "continent": 14, "global": 0}


def random_pool(n: int, seed: int = 0) -> list[Candidate]:
    rng = random.Random(seed)
    countries = [(IN, "Telangana", "Asia"), (IN, "West Bengal", "Asia"), (BD, "Dhaka", "Asia"), (JP, "Tokyo", "Asia"),
                 (DE, "Bavaria", "Europe"), (BR, "Bahia", "South America"), (None, None, None)]  # fmt: skip
    return [Candidate(i, *rng.choice(countries)) for i in range(n)]


def test_no_image_is_given_twice():
    areas = {"bn": bengali_area(), "te": telugu_area(), "hi": hindi_area(), "ja": Area(whole_countries=frozenset({JP}), countries=frozenset({JP}), continents=frozenset({"Asia"}))}  # fmt: skip
    result = select_images(random_pool(500), areas, per_language=100, seed=5)
    picked = [i for r in result.results for i, _ in r.picks]
    assert len(picked) == 400
    assert len(set(picked)) == len(picked)


def test_same_seed_same_selection_other_seed_other_selection():
    areas = {"bn": bengali_area(), "te": telugu_area()}
    pool = random_pool(2000)
    first = select_images(pool, areas, per_language=50, seed=11)
    again = select_images(list(reversed(pool)), areas, per_language=50, seed=11)
    other = select_images(pool, areas, per_language=50, seed=12)
    picks = lambda s: [r.picks for r in s.results]  # noqa: E731
    assert picks(first) == picks(again)
    assert picks(first) != picks(other)


def test_a_pool_too_small_ends_with_the_shortfall_not_an_error():
    areas = {"bn": bengali_area(), "te": telugu_area(), "hi": hindi_area()}
    result = select_images(hindi_pool()[:7], areas, per_language=3, seed=1)
    assert [len(r.picks) for r in result.results] == [3, 3, 1]
    assert result.results[-1].shortfall == 2
    assert result.shortfall == 2


def test_languages_with_equal_pools_are_served_in_code_order_and_targets_per_language():
    area = Area(whole_countries=frozenset({DE}), countries=frozenset({DE}))
    pool = images(1, 5, DE, "Bavaria", "Europe")
    result = select_images(pool, {"gsw": area, "de": area}, per_language={"de": 4, "gsw": 4}, seed=1)
    assert [r.language for r in result.results] == ["de", "gsw"]
    assert [len(r.picks) for r in result.results] == [4, 1]


def test_caller_bugs_raise():
    with pytest.raises(ValueError, match="twice"):
        select_images([Candidate(1), Candidate(1)], {"de": Area()}, per_language=1, seed=0)
    with pytest.raises(ValueError, match="negative"):
        select_images([Candidate(1)], {"de": Area()}, per_language=-1, seed=0)
