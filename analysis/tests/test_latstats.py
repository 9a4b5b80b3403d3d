

def test_variance_text_is_us2_with_four_significant_digits_grouped() -> None:
    from mmanalysis import variance_text

    assert [variance_text(v) for v in (0, 599.618, 983881016.6235, 0.004809, 36.52e6, None, float("nan"))] == [
        "0 us²", "599.6 us²", "983,900,000 us²", "0.004809 us²", "36,520,000 us²", "-", "-"]


def test_measured_selects_the_rows_the_summary_is_over() -> None:
    import pandas as pd

    from mmanalysis import measured

    df = pd.DataFrame({"outcome": ["ok", "late", "early", "missed", "ok"], "measurable": [True, True, True, True, False],
                       "latency_us": [10.0, 2000.0, -5.0, None, 99.0]})
    assert measured(df)["latency_us"].tolist() == [10.0, 2000.0]
