"""Which function calls the gate accepts: an allow list, so a function it does not know is refused.

A call sqlglot models as a typed expression (`exp.Sum`, `exp.DateTrunc`, ...) is a computation
sqlglot knows how to write in every dialect, and is accepted unless its class reveals who or where
the query runs (`CURRENT_USER`, `VERSION()`, `CURRENT_SCHEMA`, ...) or reaches outside the query
(denylist.DENIED_CLASSES). A call sqlglot does not model (`exp.Anonymous`) is accepted only when
its lower-case name is on the dialect's list below: the engines' documented pure functions
(values in, value out; the clock and random numbers count as pure), never their system, session,
catalog or administration functions. Anything else is refused unless the deployment lists it in
`QUERYBOT_ALLOWED_FUNCTIONS` (a team's own pure functions, possibly schema-qualified).

Sources: PostgreSQL 17 "Functions and Operators", MariaDB/MySQL "Built-in Functions", SQLite
"Core/Date/Math/JSON Functions", DuckDB "Functions", BigQuery "GoogleSQL function list",
Snowflake "All functions" (the Snowflake connector keeps that list).
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.gate.verdict import Reason
from connectors.base import PermissionDenied
from connectors.snowflake.functions import PURE as SNOWFLAKE
from connectors.snowflake.sql import check_calls

#: Clock readings are the only `Current*` classes accepted: they say when, not who or where.
CLOCK_CLASSES: frozenset[type[exp.Expr]] = frozenset(
    {exp.CurrentDate, exp.CurrentDatetime, exp.CurrentTime, exp.CurrentTimestamp,
     exp.CurrentTimestampLTZ}
)  # fmt: skip

#: Typed classes that reveal the server, the session or the catalog; every `Current*` class
#: outside CLOCK_CLASSES is refused too, so one sqlglot adds later fails closed.
SYSTEM_CLASSES: frozenset[type[exp.Expr]] = frozenset(
    {exp.SessionUser, exp.ObjectId, exp.Secret, exp.DynamicIdentifier, exp.VectorSearch,
     exp.FeaturesAtTime, exp.GenerateText, exp.GenerateTable, exp.GenerateBool, exp.GenerateInt,
     exp.GenerateDouble}
)  # fmt: skip

#: Typed classes refused in one dialect only: MySQL's UUID() (version 1) carries the server's
#: MAC address.
DIALECT_SYSTEM_CLASSES: dict[str, frozenset[type[exp.Expr]]] = {"mysql": frozenset({exp.Uuid})}

SYSTEM = "reveals server, session or catalog information"

_WINDOW = """row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value
last_value nth_value"""
_STATS = """avg count max min sum stddev stddev_pop stddev_samp variance var_pop var_samp corr
covar_pop covar_samp regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx
regr_sxy regr_syy"""
_TRIG = "acos asin atan atan2 cos cot sin tan sinh cosh tanh asinh acosh atanh degrees radians pi"

POSTGRES = f"""{_WINDOW} {_STATS} {_TRIG}
abs cbrt ceil ceiling div exp factorial floor gcd lcm ln log log10 min_scale mod power round scale
sign sqrt trim_scale trunc width_bucket random random_normal erf erfc acosd asind atand atan2d cosd
cotd sind tand
ascii bit_length btrim char_length character_length chr concat concat_ws format initcap left length
lower lpad ltrim md5 normalize octet_length overlay parse_ident position quote_ident quote_literal
quote_nullable regexp_count regexp_instr regexp_like regexp_match regexp_matches regexp_replace
regexp_split_to_array regexp_split_to_table regexp_substr repeat replace reverse right rpad rtrim
split_part starts_with string_to_array string_to_table strpos substr substring to_ascii to_hex
to_bin to_oct translate unistr upper casefold convert convert_from convert_to encode decode get_bit
get_byte set_bit set_byte sha224 sha256 sha384 sha512 crc32 crc32c
to_char to_date to_number to_timestamp
age clock_timestamp date_add date_bin date_part date_subtract date_trunc isfinite justify_days
justify_hours justify_interval make_date make_interval make_time make_timestamp make_timestamptz
now statement_timestamp timeofday transaction_timestamp timezone
array_append array_cat array_dims array_fill array_length array_lower array_ndims array_position
array_positions array_prepend array_remove array_replace array_reverse array_sample array_shuffle
array_sort array_to_string array_upper cardinality trim_array unnest
isempty lower_inc upper_inc lower_inf upper_inf range_merge int4range int8range numrange tsrange
tstzrange daterange
to_json to_jsonb array_to_json row_to_json json_build_array jsonb_build_array json_build_object
jsonb_build_object json_object jsonb_object json_array_length jsonb_array_length json_extract_path
jsonb_extract_path json_extract_path_text jsonb_extract_path_text json_typeof jsonb_typeof
json_strip_nulls jsonb_strip_nulls jsonb_set jsonb_set_lax jsonb_insert jsonb_pretty
jsonb_path_exists jsonb_path_match jsonb_path_query_array jsonb_path_query_first json_scalar
json_serialize
array_agg bit_and bit_or bit_xor bool_and bool_or every json_agg jsonb_agg json_object_agg
jsonb_object_agg range_agg range_intersect_agg string_agg mode percentile_cont percentile_disc
grouping any_value
coalesce nullif greatest least num_nulls num_nonnulls
gen_random_uuid uuidv4 uuidv7 uuid_extract_timestamp uuid_extract_version
to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank ts_rank_cd
ts_headline setweight strip numnode querytree tsvector_to_array array_to_tsvector
pg_typeof pg_size_pretty pg_column_size"""

MYSQL = f"""{_WINDOW} {_STATS} {_TRIG}
abs ceil ceiling conv crc32 div exp floor ln log log10 log2 mod pow power rand round sign sqrt
truncate
bin char char_length character_length concat concat_ws elt export_set field find_in_set format
from_base64 hex insert instr lcase left length locate lower lpad ltrim make_set mid oct
octet_length ord position quote regexp_instr regexp_like regexp_replace regexp_substr repeat
replace reverse right rpad rtrim soundex space strcmp substr substring substring_index to_base64
trim ucase unhex upper natural_sort_key sformat sha sha1 sha2 md5 compress uncompress
uncompressed_length charset collation coercibility to_char
adddate addtime convert_tz curdate current_date current_time current_timestamp curtime date
date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear extract from_days
from_unixtime get_format hour last_day localtime localtimestamp makedate maketime microsecond
minute month monthname now period_add period_diff quarter sec_to_time second str_to_date subdate
subtime sysdate time time_format time_to_sec timediff timestamp timestampadd timestampdiff to_days
to_seconds unix_timestamp utc_date utc_time utc_timestamp week weekday weekofyear year yearweek
add_months months_between
if ifnull nullif coalesce greatest least isnull interval
json_array json_array_append json_array_insert json_arrayagg json_compact json_contains
json_contains_path json_depth json_detailed json_equals json_exists json_extract json_insert
json_keys json_length json_loose json_merge json_merge_patch json_merge_preserve json_normalize
json_object json_objectagg json_overlaps json_pretty json_query json_quote json_remove
json_replace json_search json_set json_type json_unquote json_valid json_value
bit_and bit_or bit_xor bit_count group_concat std median percentile_cont percentile_disc
bin_to_uuid uuid_to_bin is_uuid is_ipv4 is_ipv6"""

SQLITE = f"""{_WINDOW} {_TRIG}
abs char coalesce concat concat_ws format glob hex ifnull iif if instr length like likelihood
likely lower ltrim max min nullif octet_length printf quote random replace round rtrim sign
soundex substr substring trim typeof unhex unicode unlikely upper unistr unistr_quote
date time datetime julianday unixepoch strftime timediff
avg count group_concat sum total string_agg median percentile percentile_cont percentile_disc
ceil ceiling exp floor ln log log10 log2 mod pow power sqrt trunc
json jsonb json_array jsonb_array json_array_length json_error_position json_extract
jsonb_extract json_insert jsonb_insert json_object jsonb_object json_patch jsonb_patch json_pretty
json_remove jsonb_remove json_replace jsonb_replace json_set jsonb_set json_type json_valid
json_quote json_group_array jsonb_group_array json_group_object jsonb_group_object"""

DUCKDB = f"""{_WINDOW} {_STATS} {_TRIG}
abs add age ascii bar base64 bin bit_count bit_length bit_position bitstring cardinality cbrt ceil
ceiling chr concat concat_ws contains date_add date_diff date_part date_sub date_trunc datediff
datepart datesub datetrunc day dayname dayofmonth dayofweek dayofyear decade divide editdist3
ends_with epoch epoch_ms epoch_ns epoch_us era even exp extract factorial filter flatten floor
format formatreadabledecimalsize formatreadablesize format_bytes from_base64 from_binary from_hex
from_json gamma gcd gen_random_uuid generate_series get_bit get_current_timestamp greatest
greatest_common_divisor hamming hash hex hour ilike_escape instr isfinite isinf isnan isodow
isoyear jaccard jaro_similarity jaro_winkler_similarity julian last_day lcm least
least_common_multiple left left_grapheme len length length_grapheme levenshtein lgamma like_escape
ln log log10 log2 lower lpad ltrim make_date make_time make_timestamp make_timestamptz map
map_concat map_contains map_entries map_extract map_from_entries map_keys map_values md5
md5_number microsecond millennium millisecond minute mismatches mod month monthname multiply
nanosecond nextafter normalized_interval now ord parse_dirname parse_dirpath parse_filename
parse_path position pow power prefix printf quarter random range reduce regexp_escape
regexp_extract regexp_extract_all regexp_full_match regexp_matches regexp_replace
regexp_split_to_array regexp_split_to_table repeat replace reverse right right_grapheme round
round_even row rpad rtrim second sha1 sha256 sign signbit split split_part sqrt starts_with
str_split str_split_regex strftime string_split string_split_regex string_to_array strip_accents
strlen strpos strptime struct_extract struct_insert struct_pack substr substring
substring_grapheme subtract suffix time_bucket timezone timezone_hour timezone_minute to_base
to_base64 to_binary to_centuries to_days to_decades to_hex to_hours to_json to_microseconds
to_millennia to_milliseconds to_minutes to_months to_seconds to_timestamp to_weeks to_years today
transaction_timestamp translate trim trunc try_strptime typeof ucase unbin unhex unicode
union_extract union_tag union_value upper url_decode url_encode uuid week weekday weekofyear xor
year yearweek
list list_aggregate list_any_value list_append list_apply list_avg list_cat list_concat
list_contains list_cosine_similarity list_count list_distance list_distinct list_extract
list_filter list_first list_grade_up list_has list_has_all list_has_any list_inner_product
list_intersect list_last list_max list_min list_position list_prepend list_reduce list_resize
list_reverse list_reverse_sort list_select list_slice list_sort list_sum list_transform
list_unique list_value list_where list_zip
array_aggregate array_append array_apply array_cat array_concat array_contains
array_cosine_similarity array_cross_product array_distance array_distinct array_dot_product
array_extract array_filter array_has array_has_all array_has_any array_inner_product
array_intersect array_length array_position array_prepend array_reduce array_reverse_sort
array_slice array_sort array_to_string array_transform array_unique array_value array_zip
json_array json_array_length json_contains json_exists json_extract json_extract_path
json_extract_path_text json_extract_string json_group_array json_group_object json_group_structure
json_keys json_merge_patch json_object json_pretty json_quote json_structure json_transform
json_transform_strict json_type json_valid json_value
any_value approx_count_distinct approx_quantile arbitrary arg_max arg_max_null arg_min argmax
argmin array_agg bit_and bit_or bit_xor bitstring_agg bool_and bool_or count_if countif entropy
favg first fsum geomean geometric_mean histogram kahan_sum kurtosis kurtosis_pop last mad max_by
mean median min_by mode product quantile quantile_cont quantile_disc reservoir_quantile sem
skewness string_agg sumkahan weighted_avg fill coalesce nullif ifnull"""

BIGQUERY = f"""{_WINDOW} {_STATS} {_TRIG}
abs cbrt ceil ceiling coth csc csch div exp floor greatest ieee_divide is_inf is_nan least ln log
log10 mod pow power rand range_bucket round safe_add safe_divide safe_multiply safe_negate
safe_subtract sec sech sign sqrt trunc
ascii byte_length char_length character_length chr code_points_to_bytes code_points_to_string
collate concat contains_substr edit_distance ends_with format from_base32 from_base64 from_hex
initcap instr left length lower lpad ltrim normalize normalize_and_casefold octet_length
regexp_contains regexp_extract regexp_extract_all regexp_instr regexp_replace regexp_substr repeat
replace reverse right rpad rtrim safe_convert_bytes_to_string soundex split starts_with strpos
substr substring to_base32 to_base64 to_code_points to_hex translate trim unicode upper
current_date current_datetime current_time current_timestamp date date_add date_bucket date_diff
date_from_unix_date date_sub date_trunc datetime datetime_add datetime_bucket datetime_diff
datetime_sub datetime_trunc extract format_date format_datetime format_time format_timestamp
generate_date_array generate_timestamp_array last_day parse_date parse_datetime parse_time
parse_timestamp time time_add time_diff time_sub time_trunc timestamp timestamp_add
timestamp_bucket timestamp_diff timestamp_micros timestamp_millis timestamp_seconds timestamp_sub
timestamp_trunc unix_date unix_micros unix_millis unix_seconds justify_days justify_hours
justify_interval make_interval
array array_concat array_first array_last array_length array_reverse array_slice array_to_string
array_includes array_includes_all array_includes_any array_filter array_transform generate_array
array_agg array_concat_agg array_min array_max array_sum array_avg
json_array json_array_append json_array_insert json_extract json_extract_array
json_extract_scalar json_extract_string_array json_keys json_object json_query json_query_array
json_remove json_set json_strip_nulls json_type json_value json_value_array lax_bool lax_float64
lax_int64 lax_string bool float64 int64 string parse_json to_json to_json_string
farm_fingerprint md5 sha1 sha256 sha512 generate_uuid
any_value approx_count_distinct approx_quantiles approx_top_count approx_top_sum bit_and bit_or
bit_xor countif logical_and logical_or max_by min_by string_agg grouping percentile_cont
percentile_disc
range range_contains range_end range_intersect range_overlaps range_start
st_angle st_area st_asbinary st_asgeojson st_astext st_azimuth st_boundary st_buffer st_centroid
st_closestpoint st_contains st_convexhull st_coveredby st_covers st_difference st_dimension
st_disjoint st_distance st_dwithin st_endpoint st_equals st_geogfromgeojson st_geogfromtext
st_geogfromwkb st_geogpoint st_geogpointfromgeohash st_geohash st_intersection st_intersects
st_isempty st_length st_makeline st_makepolygon st_maxdistance st_npoints st_perimeter
st_pointn st_simplify st_startpoint st_touches st_union st_within st_x st_y
net.host net.ip_from_string net.ip_net_mask net.ip_to_string net.ip_trunc net.ipv4_from_int64
net.ipv4_to_int64 net.public_suffix net.reg_domain net.safe_ip_from_string
hll_count.extract hll_count.init hll_count.merge hll_count.merge_partial
kll_quantiles.extract_int64 kll_quantiles.extract_float64 kll_quantiles.extract_point_int64
kll_quantiles.extract_point_float64 kll_quantiles.init_int64 kll_quantiles.init_float64
kll_quantiles.merge_int64 kll_quantiles.merge_float64 kll_quantiles.merge_partial"""

#: Lower-case names of functions sqlglot leaves anonymous that are accepted, per dialect. Looker
#: reads GoogleSQL and adds AGGREGATE() (its measure wrapper); MariaDB reads MySQL's.
PURE_FUNCTIONS: dict[str, frozenset[str]] = {
    "postgres": frozenset(POSTGRES.split()),
    "mysql": frozenset(MYSQL.split()),
    "sqlite": frozenset(SQLITE.split()),
    "duckdb": frozenset(DUCKDB.split()),
    "bigquery": frozenset(BIGQUERY.split()),
    "looker": frozenset(BIGQUERY.split()) | {"aggregate"},
    # The Snowflake connector's own list, which it enforces before anything is sent.
    "snowflake": SNOWFLAKE,
}
PURE_FUNCTIONS["mariadb"] = PURE_FUNCTIONS["mysql"]

#: Unquoted words some engines read as a session function where sqlglot sees a column
#: (PostgreSQL `SELECT user` is the login name, even when a table has a column `user`). DuckDB
#: reads a column of that name first, and without one its user is always `duckdb`.
SESSION_WORDS: dict[str, frozenset[str]] = {
    "postgres": frozenset(
        {"user", "current_user", "current_role", "session_user", "system_user",
         "current_catalog", "current_schema"}
    ),
    "mysql": frozenset({"current_user", "current_role"}),
    "mariadb": frozenset({"current_user", "current_role"}),
}  # fmt: skip

SETTING = "QUERYBOT_ALLOWED_FUNCTIONS"


def system_class(node: exp.Func, dialect: str) -> bool:
    """Whether a typed call reveals who or where the query runs (the clock aside)."""
    cls = type(node)
    if cls in SYSTEM_CLASSES or cls in DIALECT_SYSTEM_CLASSES.get(dialect, frozenset()):
        return True
    return cls.__name__.startswith("Current") and cls not in CLOCK_CLASSES


def is_pure(name: str, dialect: str) -> bool:
    """Whether `name` (lower case, `prefix.name` for BigQuery's families) is a known pure call."""
    return name in PURE_FUNCTIONS.get(dialect, frozenset())


def parse_allowed(
    value: str | Iterable[str], *, setting: str = SETTING, what: str = "function"
) -> frozenset[str]:
    """A deployment's trusted function names: comma-separated (or listed), case-blind, each
    `name` or `schema.name`; quotes around parts and a trailing `()` are dropped. `setting` and
    `what` name the list in the error (casts.parse_allowed_types reads type names the same way)."""
    items = value.split(",") if isinstance(value, str) else value
    names = set()
    for item in items:
        item = item.strip().removesuffix("()")
        parts = [p.strip().strip('"`[]').strip() for p in item.split(".")]
        if any(parts) and not all(parts):
            raise ValueError(f"{setting}: {item!r} is not a {what} name")
        if all(parts):
            names.add(".".join(parts).lower())
    return frozenset(names)


def unknown_message(call: str, dialect: str) -> str:
    """What a refused unknown function is, and what to do about it."""
    return (
        f"{call}() is not on the gate's list of known pure {dialect} functions; use a built-in "
        f"function, or, if it is a pure function your team defined, ask an admin to add it to "
        f"{SETTING}"
    )


def snowflake_calls_reason(text: str) -> Reason | None:
    """Why the connector would refuse the Snowflake statement `text` for one of its calls, else
    None. The gate's own walk accepts a call sqlglot models unless it is denied; the Snowflake
    connector accepts only calls named on its list of pure built-ins (`check_calls`),
    so the gate asks the connector's check of the text that will run: nothing is offered for
    approval that the connector then refuses."""
    try:
        tree = sqlglot.parse_one(text, read="snowflake")
        check_calls(tree, text)
    except PermissionDenied as refused:
        return Reason("denied_function", refused.message)
    except SqlglotError:
        return None  # the gate's own parse of this text already passed; nothing to add
    return None
