%% @doc The `subscriber' record of the IO-bound targets (Mnesia and MariaDB): the ~20 fields an
%% operator keeps for a mobile subscriber (identities, state, balance, roaming, serving nodes,
%% service profile). Records are made from a sequence number, so every target writes the same
%% data and a key can be recomputed for reads. Pure.
-module(beamscale_target_subscriber).

-export([fields/0, columns/0, key/1, values/1]).

-define(MCC_MNC, "24001").

%% @doc The field names, the key first.
-spec fields() -> [atom()].
fields() -> [F || {F, _} <- columns()].

%% @doc The fields with their SQL types (InnoDB).
-spec columns() -> [{atom(), string()}].
columns() ->
    [{imsi, "CHAR(15) NOT NULL PRIMARY KEY"}, {msisdn, "VARCHAR(15) NOT NULL"},
     {imei, "CHAR(15) NOT NULL"}, {iccid, "VARCHAR(20) NOT NULL"},
     {status, "VARCHAR(10) NOT NULL"}, {subscription_type, "VARCHAR(10) NOT NULL"},
     {tariff_plan, "VARCHAR(16) NOT NULL"}, {balance_cents, "BIGINT NOT NULL"},
     {currency, "CHAR(3) NOT NULL"}, {credit_limit_cents, "BIGINT NOT NULL"},
     {roaming_allowed, "TINYINT NOT NULL"}, {home_plmn, "CHAR(5) NOT NULL"},
     {vlr_number, "VARCHAR(15) NOT NULL"}, {sgsn_address, "VARCHAR(15) NOT NULL"},
     {apn, "VARCHAR(32) NOT NULL"}, {qos_class, "TINYINT NOT NULL"},
     {services, "INT NOT NULL"}, {language, "CHAR(2) NOT NULL"},
     {activated_at, "BIGINT NOT NULL"}, {last_activity_at, "BIGINT NOT NULL"}].

%% @doc The key (IMSI) of record number `Seq'.
-spec key(pos_integer()) -> binary().
key(Seq) -> digits(?MCC_MNC, Seq, 10).

%% @doc The field values of record number `Seq', in the order of `fields/0'.
-spec values(pos_integer()) -> [binary() | integer()].
values(Seq) ->
    H = erlang:phash2(Seq, 1 bsl 27),
    [key(Seq), digits("4670", Seq, 8), digits("35", H, 13), digits("8946", Seq, 15),
     pick(H, [<<"active">>, <<"active">>, <<"active">>, <<"suspended">>, <<"barred">>]),
     pick(H bsr 3, [<<"prepaid">>, <<"postpaid">>]),
     iolist_to_binary(["plan_", integer_to_list(H rem 12)]),
     H rem 500000, <<"SEK">>, (H bsr 5) rem 100000, (H bsr 7) rem 2,
     <<?MCC_MNC>>, digits("46708", H rem 1000, 6),
     iolist_to_binary(io_lib:format("10.~b.~b.~b", [H rem 200, (H bsr 8) rem 250, Seq rem 250])),
     pick(H bsr 9, [<<"internet">>, <<"ims">>, <<"mms">>]), 1 + (H rem 9), H rem 65536,
     pick(H bsr 11, [<<"sv">>, <<"en">>, <<"fi">>]), 1300000000 + H, 1600000000 + H].

digits(Prefix, N, Width) ->
    iolist_to_binary([Prefix, string:pad(integer_to_list(N), Width, leading, $0)]).

pick(H, List) -> lists:nth(1 + H rem length(List), List).
