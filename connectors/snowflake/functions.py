"""Snowflake's built-in functions that only compute a value, by lower-case name.

A call may be a built-in, or a user-defined or external function (which can call any HTTPS endpoint
through an API integration, or run code), and an unqualified one looks the same as a built-in;
sqlglot models many built-ins as typed expressions (`IFF`, `DATEADD`, `FLATTEN`...), but also Cortex
functions that call a model (`AI_CLASSIFY`, `AI_AGG`), functions that reach a stage (`TO_FILE`) and
context functions (`CURRENT_ROLE`, `CURRENT_USER`). So the connector accepts a call, typed or
anonymous, only when the name Snowflake runs it under is on this list (`check_calls`), and the
gate's allow-list for the `snowflake` dialect is this list too. Any function not on it is refused.

Never on it: `SYSTEM$*` (cancel queries, read account state, run tasks), the context functions
(`CURRENT_ROLE`, `CURRENT_USER`, `CURRENT_ACCOUNT`, `CURRENT_WAREHOUSE`, `LAST_QUERY_ID`...; the
clock readings `CURRENT_DATE`/`CURRENT_TIME`/`CURRENT_TIMESTAMP` aside), `GETVARIABLE`, Cortex
(`AI_*`, `SNOWFLAKE.CORTEX.*`), file functions (`TO_FILE`, `BUILD_*_URL`), and the table
functions that read history, stages or other results (`RESULT_SCAN`, `INFER_SCHEMA`,
`QUERY_HISTORY*`).

Source: Snowflake's "All functions (alphabetical)" reference, its scalar, aggregate, window,
string, binary, date, semi-structured, structured-type, vector, bitmap, conversion and math
sections.
"""

from __future__ import annotations

_TEXT = """
abs acos acosh asin asinh atan atan2 atanh cbrt ceil cos cosh cot degrees div0 div0null exp
factorial floor ln log mod pi pow power radians random round sign sin sinh sqrt square tan tanh
trunc truncate uniform normal zipf width_bucket haversine bitand bitor bitxor bitnot bitshiftleft
bitshiftright
ascii base64_decode_string base64_decode_binary try_base64_decode_binary hex_decode_binary
try_hex_decode_binary sha1_binary compress decompress_binary decompress_string randstr
base64_encode bit_length char chr charindex collate collation concat concat_ws contains
editdistance endswith hex_decode_string hex_encode initcap insert
jarowinkler_similarity left length len lower lpad ltrim md5 md5_hex md5_binary
md5_number_lower64 md5_number_upper64
octet_length parse_ip parse_url position regexp regexp_count regexp_instr regexp_like
regexp_replace regexp_substr regexp_substr_all repeat replace reverse right rlike rpad rtrim
rtrimmed_length sha1 sha1_hex sha2 sha2_hex soundex soundex_p123 space split split_part startswith
strtok strtok_to_array substr substring translate trim try_base64_decode_string
try_hex_decode_string unicode upper uuid_string like ilike like_any ilike_any like_all
add_months convert_timezone current_date current_time current_timestamp date_from_parts
date_part date_trunc dateadd datediff day dayname dayofmonth dayofweek dayofweekiso dayofyear
extract hour last_day localtime localtimestamp minute month monthname months_between next_day
previous_day quarter second sysdate systimestamp time_from_parts time_slice timeadd timediff
timestamp_from_parts timestamp_ltz_from_parts timestamp_ntz_from_parts timestamp_tz_from_parts
timestampadd timestampdiff to_date to_time to_timestamp to_timestamp_ltz to_timestamp_ntz
to_timestamp_tz try_to_date try_to_time try_to_timestamp try_to_timestamp_ltz
try_to_timestamp_ntz try_to_timestamp_tz week weekiso weekofyear year yearofweek yearofweekiso
date time timestamp getdate
cast try_cast to_char to_varchar to_number to_numeric to_decimal to_double to_boolean
to_binary to_array to_object to_variant to_json to_geography to_geometry try_to_number
try_to_numeric try_to_decimal try_to_double try_to_boolean try_to_binary try_parse_json
as_array as_binary as_boolean as_char as_varchar as_date as_decimal as_number as_double
as_real as_integer as_object as_time as_timestamp_ltz as_timestamp_ntz as_timestamp_tz
array_agg array_append array_cat array_compact array_construct array_construct_compact
array_contains array_distinct array_except array_flatten array_generate_range array_insert
array_intersection array_max array_min array_position array_prepend array_remove
array_remove_at array_reverse array_size array_slice array_sort array_to_string arrays_overlap
arrays_to_object arrays_zip array_union_agg array_unique_agg filter transform reduce
map_cat map_contains_key map_delete map_insert map_keys map_pick map_size
vector_cosine_similarity vector_inner_product vector_l1_distance vector_l2_distance
check_json check_xml get get_ignore_case get_path is_array is_binary is_boolean is_char
is_varchar is_date is_date_value is_decimal is_double is_real is_integer is_null_value
is_object is_time is_timestamp_ltz is_timestamp_ntz is_timestamp_tz json_extract_path_text
object_agg object_construct object_construct_keep_null object_delete object_insert object_keys
object_pick parse_json parse_xml strip_null_value typeof xmlget
any_value approx_count_distinct approx_percentile approx_percentile_accumulate
approx_percentile_combine approx_percentile_estimate approx_top_k approx_top_k_accumulate
approx_top_k_combine approx_top_k_estimate approximate_count_distinct approximate_jaccard_index
approximate_similarity avg bitand_agg bitor_agg bitxor_agg booland_agg boolor_agg boolxor_agg
corr count count_if covar_pop covar_samp grouping grouping_id hash_agg hll hll_accumulate
hll_combine hll_estimate kurtosis listagg max max_by median min min_by mode percentile_cont
percentile_disc regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx
regr_sxy regr_syy skew minhash minhash_combine bitmap_bit_position bitmap_bucket_number
bitmap_construct_agg bitmap_count bitmap_or_agg getbit seq1 seq2 seq4 seq8 stddev stddev_pop
stddev_samp sum var_pop var_samp variance variance_pop variance_samp
cume_dist dense_rank first_value lag last_value lead nth_value ntile percent_rank rank
ratio_to_report row_number conditional_change_event conditional_true_event
coalesce decode equal_null greatest greatest_ignore_nulls iff ifnull least least_ignore_nulls
nullif nullifzero nvl nvl2 regr_valx regr_valy zeroifnull booland boolor boolnot boolxor
hash sha2_binary
st_area st_asgeojson st_astext st_aswkb st_aswkt st_centroid st_contains st_distance
st_dwithin st_geohash st_intersects st_length st_makepoint st_point st_within st_x st_y
h3_latlng_to_cell h3_cell_to_parent
"""

#: Lower-case names of Snowflake's pure built-in functions.
PURE: frozenset[str] = frozenset(_TEXT.split())

#: Table functions a query may read from: they only turn a value into rows. (STRTOK_SPLIT_TO_TABLE
#: would be one too, but the gate refuses it in FROM, so it is not offered here either.)
TABLE_FUNCTIONS: frozenset[str] = frozenset({"flatten", "split_to_table"})
