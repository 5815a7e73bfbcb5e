%% @doc The `xmpp' kind's specs and users: checking a spec, the user's identity (Tsung's
%% `username'/`passwd' with the user's number, 1 to `userid_max'), which users are online (an
%% `atomics' array per domain, shared by the node's users, for chat destinations `online' and
%% `offline'), the stanza of each plain request type, and the delivery time of a stamped chat.
-module(beamscale_load_xmpp_user).

-export([check/1, identity/2, online/1, offline/1, stanza/2, delivered/1, pong/1, measures/0,
         types/0]).

-define(Z, beamscale_load_xmpp_stanza).
-define(SENT, <<"xmpp_chat_sent">>).
-define(DELIVERED, <<"xmpp_chat_delivered">>).
%% A room's chats apart: one sent is delivered to every occupant, the sender too.
-define(MUC_SENT, <<"xmpp_muc_sent">>).
-define(MUC_DELIVERED, <<"xmpp_muc_delivered">>).
%% Tsung's counts of a destination `online' (or `offline') that no user of this node is in.
-define(NO_ONLINE, <<"error_no_online">>).
-define(NO_OFFLINE, <<"error_no_offline">>).
-define(NO_FREE, <<"error_no_free_userid">>).
-define(HIST, xmpp_delivery).
%% Users probed at random for one online (or offline) before a random one is taken.
-define(PROBES, 16).
-define(MAX_SIZE, 1024 * 1024).
-define(MAX_USERS, 10000000).
-define(MAX_PATH, 1024).

%% The request types and the keys each takes besides `type' and `ack'.
-define(TYPES, #{
    connect => [domain, username, passwd, userid_max, muc_service, pubsub_service,
                websocket, bosh],
    close => [], starttls => [], auth_get => [], auth_set_plain => [], auth_set_digest => [],
    auth_set_sip => [], auth_sasl => [mechanism], auth_sasl_bind => [], auth_sasl_session => [],
    register => [], raw => [data],
    presence_initial => [], presence_broadcast => [show], presence_final => [],
    presence_directed => [show, destination], presence_subscribe => [destination],
    chat => [size, destination],
    iq_roster_get => [], iq_roster_add => [destination], iq_roster_remove => [destination],
    iq_roster_rename => [destination],
    muc_join => [room, nick], muc_chat => [room, size], muc_nick => [room, nick],
    muc_exit => [room, nick],
    pubsub_create => [node, config, node_type], pubsub_delete => [node],
    pubsub_subscribe => [node], pubsub_unsubscribe => [node], pubsub_publish => [node, size],
    privacy_get_names => [], privacy_set_active => [name]}).

%% @doc The request types.
-spec types() -> [atom()].
types() -> lists:sort(maps:keys(?TYPES)).

%% @doc A spec with its defaults, or the key at fault.
-spec check(map()) -> {ok, map()} | {error, atom(), string()}.
check(#{type := T} = S) when is_map_key(T, ?TYPES) ->
    Known = [type, ack, respond | maps:get(T, ?TYPES)],
    case [K || K <- maps:keys(S), not lists:member(K, Known)] of
        [K | _] -> {error, K, "unknown key (known: " ++
                        lists:join(", ", [atom_to_list(X) || X <- Known]) ++ ")"};
        [] -> try {ok, maps:fold(fun value/3, defaults(S#{ack => ack(S)}), S)}
              catch throw:{bad, Key, Msg} -> {error, Key, Msg}
              end
    end;
check(#{type := _}) -> {error, type, "expected one of " ++
                            lists:join(", ", [atom_to_list(T) || T <- types()])};
check(_) -> {error, type, "missing"}.

defaults(#{type := auth_sasl} = S) -> maps:merge(#{mechanism => plain}, S);
defaults(S) -> S.

ack(#{ack := A}) when A =:= no_ack; A =:= local; A =:= global -> A;
ack(#{ack := _}) -> throw({bad, ack, "expected no_ack, local or global"});
ack(#{type := T}) when T =:= chat; T =:= raw; T =:= muc_chat; T =:= muc_nick; T =:= muc_exit ->
    no_ack;
ack(#{type := T}) ->
    case atom_to_list(T) of
        "presence_" ++ _ -> no_ack;
        _ -> local
    end.

value(respond, V, #{ack := no_ack}) when V =/= false ->
    throw({bad, respond, "a request with ack no_ack waits for no reply to check"});
value(respond, V, #{type := close}) when V =/= false ->
    throw({bad, respond, "a close gets no reply to check"});
value(K, V, S) when K =:= type; K =:= ack; K =:= respond -> S#{K => V};
value(K, V, S) when K =:= size -> S#{K => int(K, V, 0, ?MAX_SIZE)};
value(K, V, S) when K =:= userid_max -> S#{K => int(K, V, 0, ?MAX_USERS)};
value(mechanism, V, S) when V =:= plain; V =:= digest_md5; V =:= anonymous ->
    S#{mechanism => V};
value(mechanism, _, _) -> throw({bad, mechanism, "expected plain, digest_md5 or anonymous"});
value(destination, V, S) when V =:= online; V =:= offline; V =:= random; V =:= unique;
                              V =:= previous -> S#{destination => V};
value(destination, _, _) ->
    throw({bad, destination, "expected online, offline, random, unique or previous"});
value(K, V, S) when K =:= websocket; K =:= bosh ->
    case catch iolist_to_binary(V) of
        <<"/", _/binary>> = P when byte_size(P) =< ?MAX_PATH ->
            %% Visible ASCII only: the path goes into a request line as it is.
            [throw({bad, K, "expected a path of visible ASCII (no space or control byte)"})
             || <<C>> <= P, C < 16#21 orelse C > 16#7E],
            S#{K => P};
        _ -> throw({bad, K, "expected a path starting with / of at most 1024 bytes"})
    end;
value(config, V, S) ->
    try S#{config => [{iolist_to_binary(K), iolist_to_binary(X)} || {K, X} <- V]}
    catch error:_ -> throw({bad, config, "expected a list of {Field, Value} strings"})
    end;
value(K, V, S) ->
    try S#{K => iolist_to_binary(V)}
    catch error:badarg -> throw({bad, K, "expected a string (iodata)"})
    end.

int(_K, V, Min, Max) when is_integer(V), V >= Min, V =< Max -> V;
int(K, _, Min, Max) -> throw({bad, K, lists:flatten(io_lib:format("expected an integer from "
                                                                  "~b to ~b", [Min, Max]))}).

%% @doc The connection with the user's identity of a `connect' spec.
-spec identity(map(), map()) -> map().
identity(Spec, C) ->
    D = maps:get(domain, Spec, <<"localhost">>),
    Max = maps:get(userid_max, Spec, 10000),
    Name = maps:get(username, Spec, <<"user">>),
    Pass = maps:get(passwd, Spec, <<"pass">>),
    {N, U, P} = case Max of
                    0 -> {0, Name, Pass};
                    _ -> N1 = erlang:unique_integer([positive, monotonic]) rem Max + 1,
                         B = integer_to_binary(N1),
                         {N1, <<Name/binary, B/binary>>, <<Pass/binary, B/binary>>}
                end,
    C1 = C#{domain => D, user => U, pass => P, n => N, max => Max, name => Name,
            muc => maps:get(muc_service, Spec, <<"conference.", D/binary>>),
            pubsub => maps:get(pubsub_service, Spec, <<"pubsub.", D/binary>>)},
    no_free(C1),
    C1.

%% Tsung's `error_no_free_userid': `userid_max' users are online already, so this one's id is
%% in use. Tsung starts no session then; beamscale reuses the id and connects all the same.
no_free(#{max := Max} = C) when Max > 0 ->
    case flags(C) of
        none -> ok;
        A -> [count(?NO_FREE) || atomics:get(A, Max + 1) >= Max], ok
    end;
no_free(_C) -> ok.

%% The online counts of a domain's ids (how many users are online on each: with more users than
%% `userid_max', ids are shared), and in slot Max + 1 how many ids have one, made by the first
%% user that needs them (two users racing at the very first connect may each make one: the
%% counts of the loser are lost).
flags(#{domain := D, max := Max}) when Max > 0 ->
    Key = {?MODULE, D, Max},
    case persistent_term:get(Key, undefined) of
        undefined ->
            persistent_term:put(Key, atomics:new(Max + 1, [])), persistent_term:get(Key);
        A -> A
    end;
flags(_) -> none.

%% @doc The user is online (authenticated): the connection marked, so that only a user counted
%% online is counted gone, once.
-spec online(map()) -> map().
online(#{on := true} = C) -> C;
online(C) -> flag(C, 1), C#{on => true}.

%% @doc The user is gone.
-spec offline(map()) -> ok.
offline(#{on := true} = C) -> flag(C, -1);
offline(_C) -> ok.

%% An id counts as online while any of its users is: a user leaving a shared id leaves it
%% online for the others (a flag per id was cleared by the first to leave).
flag(#{n := N} = C, D) when N > 0 ->
    case flags(C) of
        none -> ok;
        A -> case {atomics:add_get(A, N, D), D} of
                 {1, 1} -> atomics:add(A, maps:get(max, C) + 1, 1);
                 {0, -1} -> atomics:add(A, maps:get(max, C) + 1, -1);
                 _ -> ok
             end
    end;
flag(_C, _D) -> ok.

%% The JID of a destination user, and the connection remembering it (`previous').
dest(#{destination := previous}, #{prev := J} = C) -> {J, C};
dest(Spec, #{domain := D, name := Name, max := Max} = C) ->
    %% A subscription goes by default to the user just added to the roster (Tsung's).
    Default = case Spec of
                  #{type := presence_subscribe} -> previous;
                  _ -> online
              end,
    N = case {maps:get(destination, Spec, Default), Max} of
            {_, 0} -> 0;
            {unique, _} -> 1;
            {random, _} -> rand:uniform(Max);
            {previous, _} -> rand:uniform(Max);
            {online, _} -> pick(flags(C), {Max, maps:get(n, C)}, 1);
            {offline, _} -> pick(flags(C), {Max, maps:get(n, C)}, 0)
        end,
    J = case N of
            0 -> <<Name/binary, "@", D/binary>>;
            _ -> <<Name/binary, (integer_to_binary(N))/binary, "@", D/binary>>
        end,
    {J, C#{prev => J}}.

%% A user of that state other than the user itself (as Tsung picks), probed at random; a
%% random user when the probes miss. Nobody else in that state (the count in slot Max + 1):
%% Tsung's `error_no_online' (or `_offline') counted, and a random user taken (Tsung sends
%% nothing). The count keeps this O(1): a scan of the flags would be O(Max) a chat.
pick(none, {Max, _}, _Want) -> rand:uniform(Max);
pick(A, {Max, Self} = M, Want) ->
    Online = atomics:get(A, Max + 1),
    SelfOn = case Self > 0 andalso atomics:get(A, Self) > 0 of true -> 1; false -> 0 end,
    Others = case Want of
                 1 -> Online - SelfOn;
                 0 -> Max - Online - (1 - SelfOn)
             end,
    case Others > 0 andalso probe(A, M, Want, ?PROBES) of
        false -> count(case Want of 1 -> ?NO_ONLINE; 0 -> ?NO_OFFLINE end), rand:uniform(Max);
        none -> rand:uniform(Max);
        N -> N
    end.

probe(_A, _M, _Want, 0) -> none;
probe(A, {Max, Self} = M, Want, K) ->
    N = rand:uniform(Max),
    case N =/= Self andalso min(1, atomics:get(A, N)) of
        Want -> N;
        _ -> probe(A, M, Want, K - 1)
    end.

%% @doc What a plain request sends, what it waits for (`{iq, Type, To}' for an iq), and the
%% connection.
-spec stanza(map(), map()) -> {iodata(), term(), map()}.
stanza(#{type := auth_get}, #{user := U} = C) -> {?Z:auth_get(U), {iq, <<"get">>, none}, C};
stanza(#{type := register}, #{user := U, pass := P} = C) ->
    {?Z:register(U, P), {iq, <<"set">>, none}, C};
stanza(#{type := raw} = S, C) -> {maps:get(data, S, <<>>), want(S), C};
stanza(#{type := chat} = S, C) ->
    {To, C1} = dest(S, C),
    count(?SENT),
    Body = ?Z:stamp(maps:get(size, S, 16), os:system_time(microsecond)),
    {?Z:message(<<"chat">>, <<"c">>, To, Body), want(S), C1};
stanza(#{type := presence_initial} = S, C) -> {?Z:presence(initial, none, <<>>), want(S), C};
stanza(#{type := presence_final} = S, C) -> {?Z:presence(final, none, <<>>), want(S), C};
stanza(#{type := presence_broadcast} = S, C) ->
    {?Z:presence(broadcast, none, maps:get(show, S, <<"chat">>)), want(S), C};
stanza(#{type := T} = S, C) when T =:= presence_directed; T =:= presence_subscribe ->
    {To, C1} = dest(S, C),
    How = case T of presence_directed -> directed; _ -> subscribe end,
    {?Z:presence(How, To, maps:get(show, S, <<"chat">>)), want(S), C1};
stanza(#{type := iq_roster_get}, C) -> {?Z:roster(get, <<>>, <<>>), {iq, <<"get">>, none}, C};
stanza(#{type := T} = S, C) when T =:= iq_roster_add; T =:= iq_roster_remove;
                                  T =:= iq_roster_rename ->
    {To, C1} = dest(S, C),
    How = maps:get(T, #{iq_roster_add => add, iq_roster_remove => remove,
                        iq_roster_rename => rename}),
    {?Z:roster(How, To, To), {iq, <<"set">>, none}, C1};
stanza(#{type := muc_chat} = S, #{muc := M} = C) ->
    Room = maps:get(room, S, <<"room">>),
    count(?MUC_SENT),
    Body = ?Z:stamp(maps:get(size, S, 16), os:system_time(microsecond)),
    {?Z:message(<<"groupchat">>, <<"g">>, <<Room/binary, "@", M/binary>>, Body), want(S), C};
stanza(#{type := T} = S, #{muc := M, user := U} = C) when T =:= muc_join; T =:= muc_nick;
                                                         T =:= muc_exit ->
    How = maps:get(T, #{muc_join => join, muc_nick => nick, muc_exit => exit}),
    {?Z:muc(How, maps:get(room, S, <<"room">>), M, maps:get(nick, S, U)), want(S), C};
stanza(#{type := T} = S, #{pubsub := Ps, user := U, domain := D} = C)
  when T =:= pubsub_create; T =:= pubsub_delete; T =:= pubsub_subscribe;
       T =:= pubsub_unsubscribe; T =:= pubsub_publish ->
    How = maps:get(T, #{pubsub_create => create, pubsub_delete => delete,
                        pubsub_subscribe => subscribe, pubsub_unsubscribe => unsubscribe,
                        pubsub_publish => publish}),
    Payload = case T of
                  pubsub_create -> {maps:get(node_type, S, <<>>), maps:get(config, S, [])};
                  _ -> binary:copy(<<"x">>, maps:get(size, S, 0))
              end,
    {?Z:pubsub(How, maps:get(node, S, <<"/test">>), <<U/binary, "@", D/binary>>, Payload),
     {iq, <<"set">>, Ps}, C};
stanza(#{type := privacy_get_names}, C) ->
    {?Z:privacy(get_names, <<>>), {iq, <<"get">>, none}, C};
stanza(#{type := privacy_set_active} = S, C) ->
    {?Z:privacy(set_active, maps:get(name, S, <<"public">>)), {iq, <<"set">>, none}, C}.

want(#{ack := no_ack}) -> none;
want(_) -> any.

%% @doc The result of a ping (or an error for another request from the server).
-spec pong(binary()) -> iodata().
pong(X) ->
    Id = beamscale_load_xmpp_stream:attr(X, <<"id">>),
    To = beamscale_load_xmpp_stream:attr(X, <<"from">>),
    Type = case beamscale_load_xmpp_stream:has(X, <<"urn:xmpp:ping">>) of
               true -> <<"result">>;
               false -> <<"error">>
           end,
    ["<iq type='", Type, "' id='", bin(Id), "'", [[" to='", To, "'"] || To =/= undefined],
     [["><error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
       "</error></iq>"] || Type =:= <<"error">>], [["/>"] || Type =:= <<"result">>]].

bin(undefined) -> <<>>;
bin(B) -> B.

%% @doc A message received: its stamp's delivery time recorded, counted as delivered (a room's
%% chat, type `groupchat', apart). The server's bounce of a chat to a user just gone (type
%% `error') carries its body back: not one.
-spec delivered(binary()) -> ok.
delivered(X) ->
    Type = beamscale_load_xmpp_stream:attr(X, <<"type">>),
    case Type =/= <<"error">> andalso ?Z:stamped(beamscale_load_xmpp_stream:body(X)) of
        false -> ok;
        none -> ok;
        T ->
            count(case Type of <<"groupchat">> -> ?MUC_DELIVERED; _ -> ?DELIVERED end),
            Us = max(0, os:system_time(microsecond) - T),
            beamscale_load_request:observe(?HIST, Us)
    end.

count(Name) -> beamscale_load_request:named(Name).

%% @doc The counts and the histogram a run with xmpp steps has.
-spec measures() -> {[binary()], [atom()]}.
measures() ->
    {[?SENT, ?DELIVERED, ?MUC_SENT, ?MUC_DELIVERED, ?NO_ONLINE, ?NO_OFFLINE, ?NO_FREE], [?HIST]}.
