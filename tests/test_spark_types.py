"""forensics.spark.spark_type: the ingest's Arrow schemas as Spark's StructType built in Python are the types
the JVM's SQL parser gives for their DDL (the form mapInArrow took before: the same columns, types and
nullability, so the same rows)."""
import pytest

pytestmark = pytest.mark.spark


def test_the_arrow_schemas_are_the_ddl_types(spark):
    from pyspark.sql.types import _parse_datatype_string

    from forensics.ingest import OUT_ARROW, OUT_DDL
    from forensics.spark import spark_type
    from forensics.stage_output import WRITE_RESULT

    assert spark_type(OUT_ARROW) == _parse_datatype_string(OUT_DDL)  # parsed by the JVM
    assert spark_type(WRITE_RESULT) == _parse_datatype_string("part long, rows long")
    assert [f.name for f in spark_type(OUT_ARROW).fields][-1] == "row_kind"
