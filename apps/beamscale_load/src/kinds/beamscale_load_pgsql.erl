%% @doc The `pgsql' request kind, Tsung's `ts_pgsql': PostgreSQL's protocol 3.0 over the user's
%% TCP connection (`beamscale_load_pgsql_codec'). `connect' sends the startup message and reads
%% the server's authentication request; `authenticate' answers it (MD5, cleartext, or the
%% SCRAM-SHA-256 exchange with the server's signature checked) and waits until the server is
%% ready; `sql' is a simple query; `parse', `bind', `describe' and `execute' are sent without
%% waiting, `flush' reads the answers to those sent so far, and `sync' reads what they brought
%% until the server is ready; `close' terminates. A COPY FROM STDIN (by `sql', or an `execute')
%% takes `copy' (data sent without waiting), then `copydone' or `copyfail' (the server's
%% "COPY ... failed" is then the answer expected, no error).
%% Rows (DataRow messages) are counted into the run's `rows'; an ErrorResponse fails the
%% request with `{pgsql, SQLSTATE, Message}', PostgreSQL's own words. A target with `tls' sends
%% the SSLRequest first and, when the server says `S', does the TLS handshake (as Tsung's
%% ts_pgsql with ssl); its time is part of the connect time.
-module(beamscale_load_pgsql).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1, format_error/1]).
-export([name/0, tsung/0, from_tsung/3]).

-export_type([conn/0]).

-include_lib("xmerl/include/xmerl.hrl").

-define(C, beamscale_load_pgsql_codec).
%% The largest message a server may send: one is held whole, and its length comes from the
%% network.
-define(MAX_MESSAGE, 16 * 1024 * 1024).
%% The server answers an SSLRequest with one byte, at once.
-define(SSL_ANSWER_TIMEOUT, 5000).
-define(TYPES, [connect, authenticate, sql, parse, bind, describe, execute, sync, close, flush,
                copy, copydone, copyfail]).
%% SQLSTATE query_canceled: a COPY FROM STDIN ended by CopyFail.
-define(COPY_FAILED, <<"57014">>).

%% The stream, the bytes received but not used, and where the session is: `new' (no startup
%% yet), `{auth, User, Request}' (the server's authentication request awaits a password),
%% `ready', `{pending, N}' (extended messages sent, N answers to come before a Sync), or
%% `{copy_in, simple | extended}' (the server takes CopyData).
-type conn() :: {pg, beamscale_load_tcp:socket(), binary(),
                 new | ready | {auth, binary(), ?C:auth()} | {pending, non_neg_integer()}
                 | {copy_in, simple | extended}}.

%% @doc A step `#{type => T, ...}': connect (database, username), authenticate (password), sql
%% (sql), parse (sql, name), bind (portal, name, parameters), describe (portal or name),
%% execute (portal, max_rows), sync, close.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(#{type := Type} = Spec, #{host := _}) ->
    case lists:member(Type, ?TYPES) of
        true -> check_keys(Type, maps:remove(type, Spec));
        false -> {error, type, "expected one of " ++ types()}
    end;
check(#{type := _}, _Target) -> {error, target, "pgsql needs a host:port target"};
check(_Spec, _Target) -> {error, type, "missing (" ++ types() ++ ")"}.

types() -> lists:join(", ", [atom_to_list(T) || T <- ?TYPES]).

check_keys(Type, Spec) ->
    {Required, Optional} = keys(Type),
    case {Required -- maps:keys(Spec), maps:keys(Spec) -- (Required ++ Optional)} of
        {[K | _], _} -> {error, K, "missing"};
        {_, [K | _]} -> {error, K, "unknown key for " ++ atom_to_list(Type)};
        _ -> values(maps:to_list(maps:merge(defaults(Type), Spec)), #{type => Type})
    end.

keys(connect) -> {[database, username], []};
keys(authenticate) -> {[password], []};
keys(sql) -> {[sql], []};
keys(parse) -> {[sql], [name]};
keys(bind) -> {[], [portal, name, parameters]};
keys(describe) -> {[], [portal, name]};
keys(execute) -> {[], [portal, max_rows]};
keys(copy) -> {[data], []};
keys(copyfail) -> {[], [message]};
keys(_) -> {[], []}.

defaults(parse) -> #{name => <<>>};
defaults(bind) -> #{portal => <<>>, name => <<>>, parameters => []};
defaults(execute) -> #{portal => <<>>, max_rows => 0};
defaults(copyfail) -> #{message => <<"copyfail">>};
defaults(_) -> #{}.

values([], Acc) -> {ok, Acc};
values([{max_rows, N} | Rest], Acc) when is_integer(N), N >= 0, N < 1 bsl 31 ->
    values(Rest, Acc#{max_rows => N});
values([{max_rows, _} | _], _) -> {error, max_rows, "expected an integer from 0 (all rows)"};
values([{parameters, Ps} | Rest], Acc) when is_list(Ps) ->
    case [P || P <- Ps, P =/= null, not text(P)] of
        [] -> values(Rest, Acc#{parameters => [bin(P) || P <- Ps]});
        _ -> {error, parameters, "expected a list of strings (or null)"}
    end;
values([{parameters, _} | _], _) -> {error, parameters, "expected a list of strings"};
values([{K, V} | Rest], Acc) ->
    case text(V) of
        true -> values(Rest, Acc#{K => bin(V)});
        false -> {error, K, "expected a string"}
    end.

text(V) ->
    try unicode:characters_to_binary(V) of
        B -> is_binary(B)
    catch error:badarg -> false
    end.

bin(null) -> null;
bin(V) -> unicode:characters_to_binary(V).

%% @doc Open the TCP connection (and TLS, after the SSLRequest, when the target has `tls'); the
%% `connect' request starts the session over it.
-spec connect(map()) -> {ok, conn()} | {error, term()}.
connect(#{tls := _} = Target) ->
    case beamscale_load_tcp:connect(maps:remove(tls, Target)) of
        {ok, {S, <<>>}} ->
            case beamscale_load_tcp:send(S, ?C:ssl_request()) of
                ok -> ssl_answer(S, Target);
                {error, Reason} -> dropped(S, Reason)
            end;
        {error, _} = Error -> Error
    end;
connect(Target) ->
    case beamscale_load_tcp:connect(Target) of
        {ok, {S, Buf}} -> {ok, {pg, S, Buf, new}};
        {error, _} = Error -> Error
    end.

%% `S': the handshake over the socket made passive (as ssl wants it); nothing may follow the
%% byte, or it would be read as sent under TLS (CVE-2021-23222).
ssl_answer(S, Target) ->
    case beamscale_load_tcp:recv_more(S, <<>>, deadline(?SSL_ANSWER_TIMEOUT)) of
        {ok, <<"S">>} ->
            ok = beamscale_load_transport_tcp:setopts(S, [{active, false}]),
            case beamscale_load_tcp:tls(S, Target) of
                {ok, {T, Buf}} -> {ok, {pg, T, Buf, new}};
                {error, _} = Error -> Error
            end;
        {ok, <<"N">>} -> dropped(S, {?MODULE, ssl_refused});
        {ok, _} -> dropped(S, {?MODULE, bad_ssl_answer});
        {error, Reason} -> dropped(S, Reason)
    end.

dropped(S, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason}.

%% @doc One step of the session.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{type := close}, {pg, S, _, _}, _Timeout) ->
    _ = beamscale_load_tcp:send(S, ?C:terminate()),
    ok = beamscale_load_tcp:drop(S),
    {ok, closed};
request(#{type := connect, database := D, username := U}, {pg, S, Buf, new}, Timeout) ->
    sent(beamscale_load_tcp:send(S, ?C:startup(U, D)), S,
         fun() -> startup(S, Buf, deadline(Timeout), U) end);
request(#{type := connect}, Conn, _Timeout) -> {error, {?MODULE, already_connected}, Conn};
request(_Spec, {pg, S, _, new}, _Timeout) -> gone(S, {?MODULE, not_connected});
request(#{type := authenticate, password := P}, {pg, S, Buf, {auth, U, Auth}}, Timeout) ->
    authenticate(Auth, U, P, {S, Buf, deadline(Timeout)});
request(#{type := authenticate}, Conn, _Timeout) -> {error, {?MODULE, no_auth_asked}, Conn};
request(_Spec, {pg, S, _, {auth, _, _}}, _Timeout) -> gone(S, {?MODULE, not_authenticated});
request(#{type := T} = Spec, {pg, _, _, {copy_in, _}} = Conn, Timeout) ->
    copy_in(T, Spec, Conn, Timeout);
request(#{type := T}, Conn, _Timeout) when T =:= copy; T =:= copydone; T =:= copyfail ->
    {error, {?MODULE, {not_copying, T}}, Conn};
request(#{type := sql, sql := Sql}, {pg, S, Buf, _}, Timeout) ->
    sent(beamscale_load_tcp:send(S, ?C:query(Sql)), S,
         fun() -> until_ready(S, Buf, deadline(Timeout), {0, none}) end);
request(#{type := sync}, {pg, S, Buf, _}, Timeout) ->
    sent(beamscale_load_tcp:send(S, ?C:sync()), S,
         fun() -> until_ready(S, Buf, deadline(Timeout), {0, none}) end);
request(#{type := flush}, {pg, S, Buf, State}, Timeout) ->
    sent(beamscale_load_tcp:send(S, ?C:flush()), S,
         fun() -> answers(S, Buf, deadline(Timeout), {pending(State), 0}) end);
request(Spec, {pg, S, Buf, State}, _Timeout) ->
    %% The extended flow's messages up to Sync: the server answers them after a Flush or Sync.
    sent_only(S, extended(Spec), {pg, S, Buf, {pending, pending(State) + 1}}).

sent_only(S, Msg, Conn) ->
    sent(beamscale_load_tcp:send(S, Msg), S, fun() -> {ok, Conn} end).

pending({pending, N}) -> N;
pending(ready) -> 0.

%% In a COPY FROM STDIN: data, its end, or its abort (whose error is the answer asked for);
%% after a simple query's COPY the server is then ready, after an Execute's it awaits a Sync.
copy_in(copy, #{data := D}, {pg, S, _, _} = Conn, _Timeout) ->
    sent_only(S, ?C:copy_data(D), Conn);
copy_in(T, Spec, {pg, S, Buf, {copy_in, How}}, Timeout) when T =:= copydone; T =:= copyfail ->
    End = case T of
              copydone -> ?C:copy_done();
              copyfail -> ?C:copy_fail(maps:get(message, Spec))
          end,
    %% In the extended flow the server holds its answer until a Flush (or a Sync).
    {Msg, Read} =
        case How of
            simple -> {End, fun() -> until_ready(S, Buf, deadline(Timeout), {0, none}) end};
            extended -> {[End, ?C:flush()],
                         fun() -> answers(S, Buf, deadline(Timeout), {1, 0}) end}
        end,
    case {T, sent(beamscale_load_tcp:send(S, Msg), S, Read)} of
        {copyfail, {error, {pgsql, ?COPY_FAILED, _}, Conn}} -> {ok, Conn};
        {_, Result} -> Result
    end;
copy_in(T, _Spec, Conn, _Timeout) -> {error, {?MODULE, {in_copy, T}}, Conn}.

%% The answers to `N' extended messages (each ends with its own message: ParseComplete,
%% BindComplete, CloseComplete, RowDescription or NoData for a Describe, CommandComplete,
%% EmptyQueryResponse or PortalSuspended for an Execute); an error ends them all (the server
%% skips what follows until a Sync); CopyInResponse starts a COPY FROM STDIN.
answers(S, Buf, _Deadline, {0, Rows}) ->
    [beamscale_load_request:count(rows, Rows) || Rows > 0],
    {ok, {pg, S, Buf, {pending, 0}}};
answers(S, Buf, Deadline, {N, Rows}) ->
    case next(S, Buf, Deadline) of
        {ok, {T, _}, Rest} when T =:= $1; T =:= $2; T =:= $3; T =:= $T; T =:= $n; T =:= $C;
                               T =:= $I; T =:= $s ->
            answers(S, Rest, Deadline, {N - 1, Rows});
        {ok, {$D, _}, Rest} -> answers(S, Rest, Deadline, {N, Rows + 1});
        {ok, {$G, _}, Rest} -> {ok, {pg, S, Rest, {copy_in, extended}}};
        {ok, {$E, Body}, Rest} -> {error, error_reason(Body), {pg, S, Rest, {pending, 0}}};
        {ok, {$Z, _}, Rest} -> answers(S, Rest, Deadline, {0, Rows});
        {ok, _Other, Rest} -> answers(S, Rest, Deadline, {N, Rows});
        {error, Reason} -> gone(S, Reason)
    end.

extended(#{type := parse, name := N, sql := Sql}) -> ?C:parse(N, Sql);
extended(#{type := bind, portal := P, name := N, parameters := Ps}) -> ?C:bind({P, N}, Ps);
extended(#{type := describe, name := N}) -> ?C:describe(statement, N);
extended(#{type := describe} = Spec) -> ?C:describe(portal, maps:get(portal, Spec, <<>>));
extended(#{type := execute, portal := P, max_rows := N}) -> ?C:execute(P, N).

sent(ok, _S, Then) -> Then();
sent({error, Reason}, S, _Then) -> gone(S, Reason).

deadline(Timeout) -> beamscale_load_tcp:deadline(Timeout).

%% After the startup message: an authentication request, or (trust) the session at once.
startup(S, Buf, Deadline, User) ->
    case next(S, Buf, Deadline) of
        {ok, {$R, Body}, Rest} ->
            case ?C:auth(Body) of
                ok -> until_ready(S, Rest, Deadline, {0, none});
                {unsupported, N} -> gone(S, {?MODULE, {auth_method, N}});
                Auth -> {ok, {pg, S, Rest, {auth, User, Auth}}}
            end;
        {ok, {$E, Body}, _} -> gone(S, error_reason(Body));
        {ok, {T, _}, _} -> gone(S, {?MODULE, {unexpected, T}});
        {error, Reason} -> gone(S, Reason)
    end.

authenticate({md5, Salt}, U, P, {S, Buf, Deadline}) ->
    answer(?C:password(?C:md5(U, P, Salt)), S, Buf, Deadline);
authenticate(cleartext, _U, P, {S, Buf, Deadline}) ->
    answer(?C:password(P), S, Buf, Deadline);
authenticate({sasl, Mechs}, _U, P, {S, Buf, Deadline}) ->
    case lists:member(<<"SCRAM-SHA-256">>, Mechs) of
        true -> scram(P, S, Buf, Deadline);
        false -> gone(S, {?MODULE, {sasl_mechanisms, Mechs}})
    end;
authenticate(_Other, _U, _P, {S, _, _}) -> gone(S, {?MODULE, unexpected_auth}).

answer(Msg, S, Buf, Deadline) ->
    sent(beamscale_load_tcp:send(S, Msg), S, fun() -> authenticated(S, Buf, Deadline) end).

authenticated(S, Buf, Deadline) ->
    case next(S, Buf, Deadline) of
        {ok, {$R, <<0:32>>}, Rest} -> until_ready(S, Rest, Deadline, {0, none});
        {ok, {$E, Body}, _} -> gone(S, error_reason(Body));
        {ok, {T, _}, _} -> gone(S, {?MODULE, {unexpected, T}});
        {error, Reason} -> gone(S, Reason)
    end.

%% RFC 5802's exchange: client-first, server-first, client-final, server-final (checked).
scram(P, S, Buf, Deadline) ->
    Nonce = base64:encode(crypto:strong_rand_bytes(18)),
    {First, Bare} = ?C:scram_first(<<>>, Nonce),
    Steps = fun() ->
                    case next(S, Buf, Deadline) of
                        {ok, {$R, <<11:32, ServerFirst/binary>>}, Rest} ->
                            scram_final(?C:scram_final(ServerFirst, Bare, P), S, Rest, Deadline);
                        {ok, {$E, Body}, _} -> gone(S, error_reason(Body));
                        {ok, {T, _}, _} -> gone(S, {?MODULE, {unexpected, T}});
                        {error, Reason} -> gone(S, Reason)
                    end
            end,
    sent(beamscale_load_tcp:send(S, ?C:sasl_initial(<<"SCRAM-SHA-256">>, First)), S, Steps).

scram_final({ok, Final, Sig}, S, Buf, Deadline) ->
    Check = fun() ->
                    case next(S, Buf, Deadline) of
                        {ok, {$R, <<12:32, ServerFinal/binary>>}, Rest} ->
                            case ?C:scram_verify(ServerFinal, Sig) of
                                ok -> authenticated(S, Rest, Deadline);
                                {error, Why} -> gone(S, {?MODULE, {scram, Why}})
                            end;
                        {ok, {$E, Body}, _} -> gone(S, error_reason(Body));
                        {ok, {T, _}, _} -> gone(S, {?MODULE, {unexpected, T}});
                        {error, Reason} -> gone(S, Reason)
                    end
            end,
    sent(beamscale_load_tcp:send(S, ?C:sasl_response(Final)), S, Check);
scram_final({error, Why}, S, _Buf, _Deadline) -> gone(S, {?MODULE, {scram, Why}}).

%% Everything up to ReadyForQuery: rows counted, the first error kept (the session goes on).
until_ready(S, Buf, Deadline, {Rows, Err}) ->
    case next(S, Buf, Deadline) of
        {ok, {$Z, _}, Rest} ->
            [beamscale_load_request:count(rows, Rows) || Rows > 0],
            case Err of
                none -> {ok, {pg, S, Rest, ready}};
                _ -> {error, Err, {pg, S, Rest, ready}}
            end;
        {ok, {$D, _}, Rest} -> until_ready(S, Rest, Deadline, {Rows + 1, Err});
        {ok, {$G, _}, Rest} when Err =:= none -> {ok, {pg, S, Rest, {copy_in, simple}}};
        {ok, {$E, Body}, Rest} when Err =:= none ->
            until_ready(S, Rest, Deadline, {Rows, error_reason(Body)});
        {ok, _Other, Rest} -> until_ready(S, Rest, Deadline, {Rows, Err});
        {error, Reason} -> gone(S, Reason)
    end.

%% NoticeResponse, ParameterStatus and NotificationResponse may come at any time (the protocol's
%% "asynchronous operations"), before authentication ends too: skipped wherever they come.
next(S, Buf, Deadline) ->
    case ?C:decode(Buf, ?MAX_MESSAGE) of
        {ok, {T, _}, Rest} when T =:= $N; T =:= $S; T =:= $A -> next(S, Rest, Deadline);
        {ok, _, _} = Msg -> Msg;
        more -> case beamscale_load_reader:recv_at_least(S, Buf, need(Buf), Deadline) of
                    {ok, B} -> next(S, B, Deadline);
                    {error, _} = Error -> Error
                end;
        {error, Why} -> {error, {?MODULE, Why}}
    end.

%% The bytes the first message needs (its type, its length and what the length counts), once
%% its header has come; one more byte before.
need(<<_Type, Len:32, _/binary>>) -> 1 + Len;
need(Buf) -> byte_size(Buf) + 1.

error_reason(Body) ->
    F = ?C:fields(Body),
    {pgsql, maps:get($C, F, <<"?????">>), maps:get($M, F, <<>>)}.

gone(S, Reason) ->
    ok = beamscale_load_tcp:drop(S),
    {error, Reason, closed}.

%% @doc Close the connection (without Terminate: the session is over).
-spec close(conn()) -> ok.
close({pg, S, _, _}) -> beamscale_load_tcp:drop(S).

%% @doc The text of a PostgreSQL protocol error.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
%% A server's ErrorResponse (`{pgsql, SQLSTATE, Message}'), in PostgreSQL's own words.
format_error({pgsql, Code, Msg}) when is_binary(Code), is_binary(Msg) ->
    io_lib:format("pgsql ~ts: ~ts", [Code, Msg]);
format_error(already_connected) -> "pgsql connect on a session already started";
format_error(not_connected) -> "a pgsql request before connect";
format_error(no_auth_asked) -> "pgsql authenticate but the server asked for no password";
format_error(not_authenticated) -> "a pgsql request before authenticate";
format_error({not_copying, T}) -> io_lib:format("pgsql ~ts outside a COPY FROM STDIN", [T]);
format_error({in_copy, T}) ->
    io_lib:format("pgsql ~ts in a COPY FROM STDIN (copy, copydone or copyfail)", [T]);
format_error({auth_method, N}) -> io_lib:format("unsupported authentication request ~b", [N]);
format_error({sasl_mechanisms, Ms}) -> ["no SCRAM-SHA-256 among ", lists:join(", ", Ms)];
format_error({scram, Why}) -> io_lib:format("SCRAM failed: ~tp", [Why]);
format_error({unexpected, T}) when T >= $\s, T =< $~ ->
    io_lib:format("unexpected message ~c", [T]);
format_error({unexpected, T}) -> io_lib:format("unexpected message (byte ~b)", [T]);
format_error(ssl_refused) -> "the server refused TLS (its SSLRequest answer was N: ssl is off)";
format_error(bad_ssl_answer) -> "not S or N in answer to the SSLRequest";
%% Not the size the server claimed: one reason, whatever sizes a server makes up.
format_error({too_big, T, _Len, Max}) ->
    io_lib:format("pgsql: a ~ts message announced above the message bound (~b bytes): "
                  "connection closed", [message_name(T), Max]);
format_error(Other) -> io_lib:format("protocol error: ~tp", [Other]).

message_name($D) -> "DataRow";
message_name($T) -> "RowDescription";
message_name($E) -> "ErrorResponse";
message_name($C) -> "CommandComplete";
message_name(T) when T >= $\s, T =< $~ -> [T];
message_name(T) -> io_lib:format("byte ~b", [T]).

%% @doc The kind's step name.
-spec name() -> pgsql.
name() -> pgsql.

%% @doc Tsung's `ts_pgsql' sessions and their `<pgsql>' element.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_pgsql", element => pgsql, servers => ["tcp", "ssl"],
             attributes => [type, database, username, password, name_portal, name_prepared, query,
                            parameters, max_rows, formats, formats_results, contents_from_file]}.

%% @doc `ts_pgsql' (`beamscale_load_pgsql_tsung'), to the `<server>' over tcp, or ssl (the
%% SSLRequest then TLS, the certificate not checked, as Tsung does).
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) ->
    Spec = beamscale_load_pgsql_tsung:spec(E, Ctx),
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    {Spec#{target => Name}, [{Name, Target}]}.
