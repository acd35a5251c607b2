"""A dbt project as context, and metric questions compiled by MetricFlow (issue 19).

- `dbt_manifest`: manifest.json -> agent.catalog.documentation.Documentation (descriptions, value
lists
  from `accepted_values`, join keys from `relationships`, model name -> relation).
- `dbt_catalog`: catalog.json (`dbt docs generate`) -> the warehouse's own table and column
  comments where the project has no description, and row counts where the adapter reports them.
- `semantic_manifest`: semantic_manifest.json -> `SemanticLayer` (semantic models, entities,
  measures, dimensions, metrics) and the join keys its entities give.
- `artifacts`: where a project's artifacts are, read again when they change.
- `dbt_parse`: `dbt parse` run on a project directory, so its artifacts match its files.
- `metrics`: a warehouse's metric layer, and which metrics a question names (`named_in`).
- `metric_query`: the metric query the model fills in, checked against the semantic layer.
- `readable`: the part of the layer a question asked as a warehouse identity may be offered.
- `compile`: MetricFlow compiling a checked metric query to SQL in the warehouse's dialect (the
  only module that imports MetricFlow, whose engine is not a stable API).

Only `compile` needs the optional `dbt` extra (and `dbt_parse` the dbt it installs); the others
read JSON.
"""
