%% @doc The `grpc' request kind: a gRPC call (PROTOCOL-HTTP2) on the user's HTTP/2 connection
%% (`beamscale_load_h2_conn': h2c, or h2 over TLS with ALPN). Unary, server streaming, client
%% streaming and bidirectional calls; messages are raw bytes (a serialized protobuf), framed
%% with gRPC's 5-byte prefix once, at validation. The client sends all its messages and ends its
%% stream, then reads the server's: a bidirectional call is measured as one exchange. A
%% `grpc-status' other than 0 is an error named by its code (`gRPC UNAVAILABLE: message');
%% messages sent and received are counted (`grpc_messages_sent', `grpc_messages_received'), and
%% each received message's latency from the call's start is the `grpc_message' transaction.
-module(beamscale_load_grpc).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, name/0, measures/0, format_error/1]).

-define(KEYS, [service, method, call, messages, metadata, deadline_ms, expect_messages]).
-define(CALLS, [unary, server_stream, client_stream, bidi]).
-define(SENT, <<"grpc_messages_sent">>).
-define(RECEIVED, <<"grpc_messages_received">>).
-define(HIST, grpc_message).
-define(MAX_MESSAGES, 100000).
-define(SHOWN, 80).

%% @doc `#{service => "pkg.Service", method => "Method", call => unary, messages => [Bytes],
%% metadata => [{Name, Value}], deadline_ms => Ms, expect_messages => N}' against host:port.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{host := _, port := _} = Target) ->
    S = maps:merge(#{call => unary, messages => [<<>>], metadata => [], deadline_ms => none,
                     expect_messages => any}, Spec),
    try
        [throw({bad, K, "unknown key (known: " ++ known() ++ ")"})
         || K <- maps:keys(S), not lists:member(K, ?KEYS)],
        {ok, built(S, Target)}
    catch throw:{bad, Key, Msg} -> {error, Key, Msg}
    end;
check(_Spec, _Target) -> {error, target, "grpc needs a host:port target"}.

known() -> lists:join(", ", [atom_to_list(K) || K <- ?KEYS]).

built(#{call := Call, messages := Ms, metadata := Md, deadline_ms := D,
        expect_messages := E} = S, #{host := Host, port := Port} = Target) ->
    lists:member(Call, ?CALLS)
        orelse throw({bad, call, "expected unary, server_stream, client_stream or bidi"}),
    is_list(Ms) andalso Ms =/= [] andalso length(Ms) =< ?MAX_MESSAGES
        orelse throw({bad, messages, "expected a list of messages (binaries), 1 at least"}),
    Bins = [try iolist_to_binary(M) catch error:badarg -> throw({bad, messages, "expected bytes"})
            end || M <- Ms],
    length(Bins) =:= 1 orelse Call =:= client_stream orelse Call =:= bidi
        orelse throw({bad, messages, "a unary or server_stream call sends one message"}),
    E =:= any orelse is_integer(E) andalso E >= 0
        orelse throw({bad, expect_messages, "expected a number of messages"}),
    Path = ["/", name(service, S), "/", name(method, S)],
    Fields = [{<<":method">>, <<"POST">>},
              {<<":scheme">>, case maps:is_key(tls, Target) of true -> <<"https">>;
                                                                false -> <<"http">> end},
              {<<":authority">>, iolist_to_binary([Host, ":", integer_to_list(Port)])},
              {<<":path">>, iolist_to_binary(Path)},
              {<<"content-type">>, <<"application/grpc">>}, {<<"te">>, <<"trailers">>},
              {<<"user-agent">>, <<"beamscale-grpc/0.1.0">>}]
        ++ deadline(D) ++ metadata(Md),
    #{block => beamscale_load_h2_hpack:encode(Fields), count => length(Bins),
      body => iolist_to_binary([<<0, (byte_size(B)):32, B/binary>> || B <- Bins]),
      expect => E}.

%% A service or method name: letters, digits, `_' and `.' (a proto's full name).
name(Key, S) ->
    N = maps:get(Key, S, undefined),
    is_list(N) andalso N =/= [] andalso
        lists:all(fun(C) -> C =:= $_ orelse C =:= $. orelse C >= $a andalso C =< $z orelse
                                C >= $A andalso C =< $Z orelse C >= $0 andalso C =< $9 end, N)
        orelse throw({bad, Key, "expected a name such as \"pkg.Service\" or \"Method\""}),
    list_to_binary(N).

%% `grpc-timeout': the deadline the server is told, in milliseconds.
deadline(none) -> [];
deadline(Ms) when is_integer(Ms), Ms > 0, Ms < 100000000 ->
    [{<<"grpc-timeout">>, <<(integer_to_binary(Ms))/binary, "m">>}];
deadline(_) -> throw({bad, deadline_ms, "expected milliseconds (at most 8 digits)"}).

metadata(Md) when is_list(Md) ->
    [case P of
         {N, V} ->
             Name = string:lowercase(unicode:characters_to_binary(N)),
             Value = unicode:characters_to_binary(V),
             is_binary(Name) andalso is_binary(Value) andalso
                 binary:match(<<Name/binary, Value/binary>>, [<<"\r">>, <<"\n">>, <<0>>])
                 =:= nomatch orelse throw({bad, metadata, "CR, LF or NUL in metadata"}),
             {Name, Value};
         _ -> throw({bad, metadata, "expected a list of {Name, Value} strings"})
     end || P <- Md];
metadata(_) -> throw({bad, metadata, "expected a list of {Name, Value} strings"}).

%% @doc Open the user's HTTP/2 connection.
-spec connect(map()) -> {ok, beamscale_load_h2_conn:conn()} | {error, term()}.
connect(Target) -> beamscale_load_h2_conn:connect(Target).

%% @doc Make the call and read its answer.
-spec request(map(), beamscale_load_h2_conn:conn(), pos_integer()) ->
    beamscale_load_request:result().
request(#{block := Block, body := Body, count := N, expect := E}, Conn, Timeout) ->
    T0 = erlang:monotonic_time(microsecond),
    case beamscale_load_h2_conn:request({Block, Body, 1, true}, Conn, Timeout) of
        {ok, Conn1, [#{status := 200} = Resp]} ->
            ok = beamscale_load_request:status(200),
            count(?SENT, N),
            answer(Resp, T0, E, Conn1);
        {ok, Conn1, [#{status := St}]} ->
            ok = beamscale_load_request:status(St),
            {error, {status, St}, Conn1};
        {error, Reason, closed} -> {error, Reason, closed}
    end.

answer(#{headers := Hs, trailers := Ts, body := Body, times := Times}, T0, E, Conn) ->
    All = Ts ++ Hs,
    case messages(iolist_to_binary(Body), 0, []) of
        {ok, Ends} ->
            count(?RECEIVED, length(Ends)),
            observe(lists:reverse(Ends), lists:reverse(Times), T0),
            case {lists:keyfind(<<"grpc-status">>, 1, All), length(Ends)} of
                {{_, <<"0">>}, Got} when E =:= any; Got =:= E -> {ok, Conn};
                {{_, <<"0">>}, Got} -> {error, {?MODULE, {messages, Got, E}}, Conn};
                {{_, Code}, _} -> {error, {?MODULE, {status, Code, message(All)}}, Conn};
                {false, _} -> {error, {?MODULE, no_status}, Conn}
            end;
        {error, R} -> {error, {?MODULE, R}, Conn}
    end.

%% The offsets where each length-prefixed message ends.
messages(<<>>, _At, Acc) -> {ok, Acc};
messages(<<0, Len:32, _:Len/binary, Rest/binary>>, At, Acc) ->
    End = At + 5 + Len,
    messages(Rest, End, [End | Acc]);
messages(<<1, _/binary>>, _, _) -> {error, compressed};
messages(_, _, _) -> {error, truncated_message}.

%% Each message's latency: when the DATA frame that completed it came.
observe([], _, _) -> ok;
observe([End | Ends], [{Got, T} | _] = Times, T0) when Got >= End ->
    beamscale_load_request:observe(?HIST, max(0, T - T0)),
    observe(Ends, Times, T0);
observe(Ends, [_ | Times], T0) -> observe(Ends, Times, T0);
observe(_, [], _) -> ok.

count(Name, N) ->
    case beamscale_load_request:metrics() of
        #{named := {_, #{Name := _}}} = M ->
            beamscale_load_metrics:count(M, Name, N);
        _ -> ok
    end.

%% `grpc-message', percent-decoded, cut and kept printable: a server's text in a reason.
message(Hs) ->
    case lists:keyfind(<<"grpc-message">>, 1, Hs) of
        {_, V} -> printable(binary:part(V, 0, min(byte_size(V), ?SHOWN)));
        false -> <<>>
    end.

printable(B) ->
    << <<(case C of C when C >= 32, C < 127 -> C; _ -> $? end)>> || <<C>> <= unpercent(B) >>.

unpercent(<<$%, H:2/binary, Rest/binary>>) ->
    try binary_to_integer(H, 16) of
        C -> <<C, (unpercent(Rest))/binary>>
    catch error:badarg -> <<$%, (unpercent(<<H/binary, Rest/binary>>))/binary>>
    end;
unpercent(<<C, Rest/binary>>) -> <<C, (unpercent(Rest))/binary>>;
unpercent(<<>>) -> <<>>.

%% @doc Close the user's connection.
-spec close(beamscale_load_h2_conn:conn()) -> ok.
close(Conn) -> beamscale_load_h2_conn:close(Conn).

%% @doc The kind's step name.
-spec name() -> grpc.
name() -> grpc.

%% @doc The message counts and the per-message latency a run with grpc steps has.
-spec measures() -> {[binary()], [atom()]}.
measures() -> {[?SENT, ?RECEIVED], [?HIST]}.

%% @doc The text of the kind's reasons (HTTP/2's from `beamscale_load_h2').
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({status, Code, Msg}) ->
    io_lib:format("gRPC ~ts: ~ts", [status_name(Code), Msg]);
format_error({messages, Got, Want}) ->
    io_lib:format("gRPC: ~b messages received, ~b expected", [Got, Want]);
format_error(no_status) -> "gRPC: no grpc-status in the response";
format_error(compressed) -> "gRPC: a compressed message (none was accepted)";
format_error(truncated_message) -> "gRPC: a message cut short";
format_error(R) -> beamscale_load_h2:format_error(R).

status_name(Code) ->
    Names = {"CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
             "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
             "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
             "UNAUTHENTICATED"},
    try binary_to_integer(Code) of
        N when N >= 1, N =< 16 -> element(N, Names);
        _ -> ["status ", printable(Code)]
    catch error:badarg -> ["status ", printable(binary:part(Code, 0, min(8, byte_size(Code))))]
    end.
