"""template.yaml deploys in an ordinary account as README "Deploy to AWS" and docs/aws.md say:
optional VPC, CORS off unless asked for, no reserved concurrency, the data tables protected, API
access logs without headers, the alarms, the layer built for the chosen architecture."""

from __future__ import annotations

import json

from tests.support.template import load_template

TEMPLATE = load_template()
RESOURCES = TEMPLATE["Resources"]
PARAMETERS = TEMPLATE["Parameters"]


def of_type(kind: str) -> dict[str, dict]:
    return {name: r for name, r in RESOURCES.items() if r["Type"] == kind}


def test_the_vpc_is_optional_and_applies_to_every_function_when_given():
    assert PARAMETERS["VpcSubnetIds"]["Default"] == "" and PARAMETERS["VpcSecurityGroupIds"]["Default"] == ""
    condition, config, otherwise = TEMPLATE["Globals"]["Function"]["VpcConfig"]["Fn::If"]

    assert condition == "InVpc"
    assert config == {"SubnetIds": {"Ref": "VpcSubnetIds"}, "SecurityGroupIds": {"Ref": "VpcSecurityGroupIds"}}
    assert otherwise == {"Ref": "AWS::NoValue"}


def test_cors_is_off_unless_origins_are_given():
    assert PARAMETERS["CorsAllowOrigins"]["Default"] == ""
    condition, cors, otherwise = RESOURCES["HttpApi"]["Properties"]["CorsConfiguration"]["Fn::If"]

    assert condition == "HasCors"
    assert cors["AllowOrigins"] == {"Ref": "CorsAllowOrigins"}
    assert {"authorization", "content-type", "mcp-protocol-version"} <= set(cors["AllowHeaders"])
    assert otherwise == {"Ref": "AWS::NoValue"}


def test_no_function_reserves_concurrency():
    for name, function in of_type("AWS::Serverless::Function").items():
        assert "ReservedConcurrentExecutions" not in function["Properties"], name


def test_the_tables_that_keep_data_are_protected_and_every_table_is_encrypted():
    tables = of_type("AWS::DynamoDB::Table")

    for name in ("MemoriesTable", "TenantsTable"):
        assert tables[name]["Properties"]["DeletionProtectionEnabled"] is True, name
        assert tables[name]["DeletionPolicy"] == tables[name]["UpdateReplacePolicy"] == "Retain", name
    for name, table in tables.items():
        assert table["Properties"]["SSESpecification"] == {"SSEEnabled": True}, name
    assert {n for n, t in tables.items() if "TimeToLiveSpecification" in t["Properties"]} == {
        "MemoriesTable",
        "RateLimitTable",
        "IdempotencyTable",
    }


def test_the_http_api_logs_each_request_without_headers_or_bodies():
    settings = RESOURCES["HttpApi"]["Properties"]["AccessLogSettings"]
    fields = json.loads(settings["Format"])

    assert settings["DestinationArn"] == {"Fn::GetAtt": "HttpApiAccessLogs.Arn"}
    assert "RetentionInDays" in RESOURCES["HttpApiAccessLogs"]["Properties"]
    assert {"requestId", "routeKey", "status"} <= set(fields)
    assert not [v for v in fields.values() if "header" in v.lower() or "body" in v.lower()]


def test_the_alarms_watch_5xx_throttles_the_indexers_lag_and_its_failure_queue():
    watched = set()
    for alarm in of_type("AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        metrics = [m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m]
        metrics += [props] if "MetricName" in props else []
        watched.update((m["Namespace"], m["MetricName"]) for m in metrics)
        assert props["AlarmActions"]["Fn::If"][0] == "HasAlarmTopic"

    assert watched == {
        ("AWS/ApiGateway", "5xx"),
        ("AWS/Lambda", "Throttles"),
        ("AWS/Lambda", "IteratorAge"),
        ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
    }


def test_every_function_is_throttle_watched():
    (alarm,) = [a for a in of_type("AWS::CloudWatch::Alarm").values() if "Metrics" in a["Properties"]]
    refs = {
        d["Value"]["Ref"]
        for m in alarm["Properties"]["Metrics"]
        if "MetricStat" in m
        for d in m["MetricStat"]["Metric"]["Dimensions"]
    }

    assert refs == set(of_type("AWS::Serverless::Function"))


def test_the_layer_and_the_functions_are_built_for_the_architecture_parameter():
    layer = RESOURCES["SharedLayer"]

    assert PARAMETERS["Architecture"]["Default"] == "arm64"
    assert TEMPLATE["Globals"]["Function"]["Architectures"] == [{"Ref": "Architecture"}]
    assert layer["Properties"]["CompatibleArchitectures"] == [{"Ref": "Architecture"}]
    assert layer["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": {"Ref": "Architecture"}}
