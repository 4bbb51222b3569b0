"""Ordinary English words for the words of a column name, as data.

A column name is split into words (``parser.name_tokens``: "avgDailyRate" → avg,
daily, rate; "fuel_l" → fuel, l). A user says those words in full, in another
ordinary word, or names the unit instead of writing it: "average daily rate",
"guest rating" for ``reviewScore``, "litres of fuel" for ``fuel_l``. These tables
say which words a name's word may be read as; the parser builds the patterns.
"""

from __future__ import annotations

# A word of a column name → other words a request may use for it (short forms written
# out and ordinary near-synonyms; each also matched in the plural).
WORD_SYNONYMS: dict[str, tuple[str, ...]] = {
    "avg": ("average",),
    "amt": ("amount",),
    "qty": ("quantity",),
    "num": ("number",),
    "pct": ("percent", "percentage"),
    "temp": ("temperature",),
    "dept": ("department",),
    "emp": ("employee",),
    "cust": ("customer",),
    "desc": ("description",),
    "addr": ("address",),
    "cnt": ("count",),
    "no": ("number",),
    "nbr": ("number",),
    "nr": ("number",),
    "yr": ("year",),
    "yrs": ("years",),
    "hrs": ("hours",),
    "mgr": ("manager",),
    "acct": ("account",),
    "bal": ("balance",),
    "inv": ("invoice",),
    "pmt": ("payment",),
    "txn": ("transaction",),
    "loc": ("location",),
    "wh": ("warehouse",),
    "svc": ("service",),
    "prod": ("product",),
    "cat": ("category",),
    "ref": ("reference",),
    "org": ("organisation", "organization"),
    "score": ("rating", "grade", "points"),
    "rating": ("score", "grade"),
    "revenue": ("income", "takings"),
    "cost": ("expense", "spend", "spending"),
    "price": ("cost", "charge", "fare"),
    "staff": ("employee", "worker"),
    "employee": ("staff", "worker"),
    "client": ("customer",),
    "customer": ("client",),
    "supplier": ("vendor",),
    "vendor": ("supplier",),
}

# A unit glued onto a column name ("distance_km", "fuel_l", "cost_usd") → the words a
# request names that unit with.
UNIT_WORDS: dict[str, tuple[str, ...]] = {
    "km": ("kilometre", "kilometer", "km", "kms"),
    "m": ("metre", "meter"),
    "cm": ("centimetre", "centimeter"),
    "mm": ("millimetre", "millimeter"),
    "mi": ("mile",),
    "l": ("litre", "liter", "ltr"),
    "ml": ("millilitre", "milliliter"),
    "kg": ("kilogram", "kilo", "kg", "kgs"),
    "g": ("gram",),
    "t": ("tonne", "ton"),
    "usd": ("dollar", "usd"),
    "eur": ("euro", "eur"),
    "jpy": ("yen", "jpy"),
    "yen": ("yen",),
    "gbp": ("pound", "gbp"),
    "min": ("minute",),
    "mins": ("minute",),
    "sec": ("second",),
    "secs": ("second",),
    "s": ("second",),
    "h": ("hour",),
    "hrs": ("hour",),
    "kwh": ("kilowatt hour", "kwh"),
    "pct": ("percent", "percentage"),
}

# Short forms of a measure word: alone they still name the one column whose name holds
# them ("quantity" ~ ``itemQty``, "amount" ~ ``billAmt``, "percent" ~ ``tipPct``), though
# the generic words they abbreviate name nothing by themselves.
MEASURE_SHORT_FORMS: frozenset[str] = frozenset({"qty", "amt", "pct"})
