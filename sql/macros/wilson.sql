-- Wilson score interval (95%) for `passed` successes out of `total`; NULL when total is 0.
CREATE OR REPLACE MACRO wilson_low(passed, total) AS
    CASE WHEN total > 0 THEN
        ((passed / total + 1.959963984540054 ^ 2 / (2 * total))
         - 1.959963984540054 * sqrt((passed / total) * (1 - passed / total) / total
                                    + 1.959963984540054 ^ 2 / (4 * total * total)))
        / (1 + 1.959963984540054 ^ 2 / total)
    END;
CREATE OR REPLACE MACRO wilson_high(passed, total) AS
    CASE WHEN total > 0 THEN
        ((passed / total + 1.959963984540054 ^ 2 / (2 * total))
         + 1.959963984540054 * sqrt((passed / total) * (1 - passed / total) / total
                                    + 1.959963984540054 ^ 2 / (4 * total * total)))
        / (1 + 1.959963984540054 ^ 2 / total)
    END;
