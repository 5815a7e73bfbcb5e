%% @doc The `amqp' kind's requests checked (`check/2'), and Tsung's `<amqp>' element translated
%% into them (`from_tsung/3'), with its `<option type="ts_amqp">' credentials and heartbeat.
-module(beamscale_load_amqp_spec).

-export([check/2, from_tsung/3]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [attr/3, req/3, fail/4]).

%% Bytes a `size' payload may ask for: the payload is built per publish.
-define(MAX_SIZE, 16 * 1024 * 1024).
%% The publish stamp's bytes (`beamscale_load_stamp').
-define(STAMP, 12).
%% Each type's keys and their defaults (Tsung's: guest/guest, heartbeat 600 s, channel 1).
-define(KEYS,
        #{'connection.open' => #{vhost => <<"/">>, user => <<"guest">>,
                                 password => <<"guest">>, heartbeat_s => 600},
          'connection.close' => #{},
          'channel.open' => #{channel => 0},
          'channel.close' => #{channel => 1},
          'confirm.select' => #{channel => 1},
          'exchange.declare' => #{channel => 1, exchange => none, exchange_type => <<"direct">>,
                                  durable => false, auto_delete => false},
          'queue.declare' => #{channel => 1, queue => <<>>, durable => false, exclusive => false,
                               auto_delete => false},
          'queue.bind' => #{channel => 1, queue => none, exchange => none, routing_key => <<>>},
          'basic.qos' => #{channel => 1, prefetch_size => 0, prefetch_count => 0},
          'basic.consume' => #{channel => 1, queue => none, ack => false},
          'basic.publish' => #{channel => 1, exchange => <<>>, routing_key => <<>>,
                               persistent => false, payload => none, size => none,
                               stamp => false},
          'waitForConfirms' => #{}}).

%% @doc `#{type => Method, ...}' with its keys (docs/scenario.md, "amqp"), defaults filled.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := _}) ->
    Keys = maps:map(fun(_, Defaults) -> maps:keys(Defaults) end, ?KEYS),
    beamscale_load_request:check_typed(
      Spec, Keys, fun(T, S) -> spec(T, maps:merge(maps:get(T, ?KEYS), S)) end);
check(#{type := _}, _Target) -> {error, target, "amqp needs a host:port target"};
check(_Spec, _Target) -> {error, type, "missing"}.

spec(Type, S) ->
    S1 = maps:map(fun(K, V) -> value(K, V, S) end, maps:remove(type, S)),
    case Type of
        %% A publish waits for no reply (confirms are awaited by waitForConfirms): counted
        %% apart, as Tsung's request_noack, not in the latency percentiles.
        'basic.publish' -> (wire(payload(S1)))#{ack => no_ack};
        _ -> S1
    end#{type => Type}.

value(channel, V, #{type := T}) ->
    case int(channel, V) of
        0 when T =/= 'channel.open' -> 1;
        N when N =< 65535 -> N;
        _ -> bad(channel, "expected a channel from 1 to 65535")
    end;
value(K, V, _S) when K =:= heartbeat_s; K =:= prefetch_count ->
    case int(K, V) of
        N when N =< 65535 -> N;
        _ -> bad(K, "expected an integer from 0 to 65535")
    end;
value(prefetch_size, V, _S) -> int(prefetch_size, V);
value(_K, B, _S) when B =:= true; B =:= false -> B;
value(K, V, _S) when K =:= durable; K =:= auto_delete; K =:= exclusive; K =:= ack;
                     K =:= persistent; K =:= stamp ->
    case text(K, V) of
        <<"true">> -> true;
        <<"false">> -> false;
        _ -> bad(K, "expected true or false")
    end;
value(K, none, _S) when K =:= payload; K =:= size -> none;
value(K, none, _S) -> bad(K, "missing");
value(payload, V, _S) -> bytes(payload, V);
value(size, N, _S) when is_integer(N), N >= 0, N =< ?MAX_SIZE -> N;
value(size, _, _S) -> bad(size, "expected a size from 0 to 16 MiB");
value(K, V, _S) ->
    case text(K, V) of
        B when byte_size(B) =< 255 -> B;
        _ -> bad(K, "at most 255 bytes (an AMQP short string)")
    end.

payload(#{payload := none, size := none} = S) -> maps:without([size], S#{payload := <<>>});
payload(#{payload := none, size := N} = S) -> maps:without([payload], S#{size := N});
payload(#{size := none} = S) -> maps:without([size], S);
payload(_) -> bad(size, "give payload or size, not both").

%% A body that fits one frame under any frame-max (4096 bytes, frame overhead included) is
%% encoded once, here: a publish sends `[Head, Stamp, Tail]', only its stamp made then (a
%% size payload's first bytes, or in front of a given one with `stamp => true'). Measured
%% (bench/amqp_vs_tsung.sh): the frames built and a size payload allocated twice per publish.
wire(#{channel := Ch, persistent := P} = S) ->
    {Stamp, Tail} = case S of
                        #{size := N} when N >= ?STAMP -> {true, <<0:((N - ?STAMP) * 8)>>};
                        #{size := N} -> {false, <<0:(N * 8)>>};
                        #{payload := B, stamp := true} -> {true, B};
                        #{payload := B} -> {false, B}
                    end,
    case byte_size(Tail) + case Stamp of true -> ?STAMP; false -> 0 end of
        Size when Size > 0, Size =< 4088 ->
            S#{wire => {beamscale_load_amqp_codec:publish_head(Ch, S, P, Size), Stamp,
                        <<Tail/binary, 16#CE>>}};
        _ -> S
    end.

%% An integer, or its digits (a channel number substituted from a variable); empty (an unset
%% variable) is 0.
int(_K, N) when is_integer(N), N >= 0 -> N;
int(K, V) ->
    case text(K, V) of
        <<>> -> 0;
        B -> try binary_to_integer(B) of
                 N when N >= 0, N =< 4294967295 -> N;
                 _ -> bad(K, "expected a non-negative integer")
             catch error:badarg -> bad(K, "expected a non-negative integer")
             end
    end.

text(K, V) when is_atom(V) -> bad(K, "expected a string");
text(K, V) -> bytes(K, V).

bytes(Key, V) ->
    try iolist_to_binary(V)
    catch error:badarg -> bad(Key, "expected a string (iodata)")
    end.

-spec bad(atom(), string()) -> no_return().
bad(Key, Msg) -> throw({bad, Key, Msg}).

%% @doc An `<amqp>' element: `type' is the method (Tsung's names), its attributes the spec's
%% keys (`payload_size' is `size'); 'connection.open' takes the username, password and
%% heartbeat `<option type="ts_amqp">'s; `waitForMessages' (timeout, seconds) is a `wait' step.
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) ->
    beamscale_load_tsung_dom:check_attrs(E, Ctx),
    Type = req(E, type, Ctx),
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    case Type of
        "waitForMessages" ->
            {#{wait_ms => seconds(E, 60, Ctx), target => Name}, [{Name, Target}]};
        _ ->
            Spec = tsung_spec(Type, E, Ctx),
            %% Checked with its placeholders (subst) empty, as the scenario checks it.
            Blank = maps:map(fun(_, V) when is_binary(V) ->
                                     case binary:match(V, <<"%%">>) of
                                         nomatch -> V;
                                         _ -> <<>>
                                     end;
                                (_, V) -> V
                             end, Spec),
            case check(Blank, #{host => "", port => 0}) of
                {ok, _} -> {Spec#{target => Name}, [{Name, Target}]};
                {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
            end
    end.

tsung_spec(Type, E, Ctx) ->
    case [T || T <- maps:keys(?KEYS), atom_to_list(T) =:= Type] of
        ['connection.open'] ->
            (options(Ctx))#{type => 'connection.open',
                            vhost => unicode:characters_to_binary(attr(E, vhost, "/"))};
        %% Tsung's waitForConfirms waits `timeout' seconds; here it ends at the last confirm.
        ['waitForConfirms'] -> #{type => 'waitForConfirms'};
        [T] -> Attrs = maps:from_list([{key(N), unicode:characters_to_binary(V)}
                                       || #xmlAttribute{name = N, value = V}
                                                          <- E#xmlElement.attributes,
                                                      N =/= type]),
               publish_size(Attrs#{type => T}, T);
        [] -> fail(E, Ctx, "type=\"~ts\" (expected one of ~ts)",
                   [Type, lists:join(", ", [atom_to_list(T) || T <- maps:keys(?KEYS)]
                                     ++ ["waitForMessages"])])
    end.

key(payload_size) -> size;
key(N) -> N.

%% Tsung's payload overrides its payload_size; a size from the text is an integer.
publish_size(S, T) when T =/= 'basic.publish' -> S;
publish_size(#{payload := _} = S, _) -> maps:without([size], S);
publish_size(#{size := V} = S, _) ->
    try S#{size := binary_to_integer(V)}
    catch error:badarg -> S
    end;
publish_size(S, _) -> S#{size => 100}.

options(Ctx) ->
    Opts = [{N, V} || {"ts_amqp", N, V} <- maps:get(options, Ctx, [])],
    maps:from_list([{K, V} || {N, V} <- Opts,
                              {Name, K} <- [{"username", user}, {"password", password},
                                            {"heartbeat", heartbeat_s}],
                              N =:= Name]).

seconds(E, Default, Ctx) ->
    V = attr(E, timeout, integer_to_list(Default)),
    try list_to_integer(V) of
        S when S > 0, S =< 4294967 -> S * 1000;
        _ -> fail(E, Ctx, "timeout: expected seconds from 1 to 4294967", [])
    catch error:badarg -> fail(E, Ctx, "timeout=\"~ts\" (expected seconds)", [V])
    end.

