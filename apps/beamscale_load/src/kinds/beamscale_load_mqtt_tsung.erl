%% @doc Tsung's `<mqtt>' element for the `mqtt' kind: `type' connect (clean_start, keepalive,
%% will_*, and `version' 5 for MQTT 5.0, which Tsung has not), publish (topic, qos, retained;
%% the text is the payload), subscribe (topic, qos), unsubscribe (topic), disconnect;
%% `waitForMessages' (timeout, seconds) is a `wait' step.
-module(beamscale_load_mqtt_tsung).

-export([tsung/0, from_tsung/3]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/2, attr/3, req/3, bool/4, fail/4]).

%% @doc Tsung's `ts_mqtt' sessions and their `<mqtt>' element, to a tcp or ssl server.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_mqtt", element => mqtt, servers => ["tcp", "ssl"],
             attributes => [type, clean_start, keepalive, will_topic, will_qos, will_msg,
                            will_retain, topic, qos, retained, timeout, version]}.

%% @doc The spec of an `<mqtt>' element and the target it uses; `Check(Spec, Target)' says
%% whether the spec is right (`beamscale_load_mqtt:check/2', passed in: that module calls this
%% one).
-spec from_tsung(#xmlElement{}, map(),
                 fun((map(), map()) -> {ok, map()} | {error, atom(), string()})) ->
    {map(), [{atom(), map()}]}.
from_tsung(E, Ctx, Check) ->
    check_attrs(E, Ctx),
    Spec = case req(E, type, Ctx) of
               "connect" -> tsung_connect(E, Ctx);
               "publish" -> #{type => publish, topic => topic(E, Ctx), qos => qos(E, Ctx),
                              retain => bool(E, retained, false, Ctx),
                              payload => unicode:characters_to_binary(
                                           beamscale_load_tsung_request:text(E))};
               "subscribe" -> #{type => subscribe, topic => topic(E, Ctx), qos => qos(E, Ctx)};
               "unsubscribe" -> #{type => unsubscribe, topic => topic(E, Ctx)};
               "disconnect" -> #{type => disconnect};
               "waitForMessages" -> #{wait_ms => wait_ms(E, Ctx)};
               T -> fail(E, Ctx, "type=\"~ts\" (expected connect, publish, subscribe, "
                                 "unsubscribe or disconnect)", [T])
           end,
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    case Spec of
        #{wait_ms := _} -> {Spec#{target => Name}, [{Name, Target}]};
        _ -> checked(Spec, Name, Target, {E, Ctx, Check})
    end.

checked(Spec, Name, Target, {E, Ctx, Check}) ->
    case Check(Spec, #{host => "", port => 0}) of
        {ok, _} -> {Spec#{target => Name}, [{Name, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.

tsung_connect(E, Ctx) ->
    Will = case attr(E, will_topic) of
               undefined -> #{};
               T -> #{will => #{topic => T, message => attr(E, will_msg, ""),
                                qos => qos(E, will_qos, Ctx),
                                retain => bool(E, will_retain, false, Ctx)}}
           end,
    Will#{type => connect, clean => bool(E, clean_start, true, Ctx),
          keepalive_s => int(E, keepalive, "60", Ctx), version => int(E, version, "4", Ctx)}.

%% Tsung's `timeout' is in seconds (default 1): the wait ends at the first message, or fails
%% with `no pushed message within Ms ms'.
wait_ms(E, Ctx) ->
    case int(E, timeout, "1", Ctx) of
        S when S > 0, S =< 4294967 -> S * 1000;
        _ -> fail(E, Ctx, "timeout: expected seconds from 1 to 4294967", [])
    end.

topic(E, Ctx) -> unicode:characters_to_binary(req(E, topic, Ctx)).

qos(E, Ctx) -> qos(E, qos, Ctx).

qos(E, Name, Ctx) ->
    case attr(E, Name, "0") of
        "0" -> 0;
        "1" -> 1;
        "2" -> 2;
        Q -> fail(E, Ctx, "~ts=\"~ts\" (expected 0, 1 or 2)", [Name, Q])
    end.

int(E, Name, Default, Ctx) ->
    V = attr(E, Name, Default),
    try list_to_integer(V)
    catch error:badarg -> fail(E, Ctx, "~ts=\"~ts\" (expected an integer)", [Name, V])
    end.
