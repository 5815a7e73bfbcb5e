%% @doc Tsung's `<jabber>' element for the `xmpp' kind: its `type' (`presence:initial' is the
%% spec type `presence_initial', `iq:roster:get' is `iq_roster_get'...), `ack', `size',
%% `destination', `room', `nick', `node', `data' (raw's text; pubsub:create's node
%% configuration), `show', `node_type' (pubsub:create's node type), and, on
%% `connect', `<xmpp_authenticate>' and the file's
%% `<option type="ts_jabber">' settings (domain, username, passwd, userid_max, muc_service,
%% pubsub_service; ?UNUSED are accepted and change nothing).
-module(beamscale_load_xmpp_tsung).

-export([tsung/0, from_tsung/3]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/2, attr/3, req/3, fail/4]).

-define(OPTIONS, ["domain", "username", "passwd", "userid_max", "muc_service",
                  "pubsub_service"] ++ ?UNUSED).
%% Tsung's bookkeeping (global_number), and destinations taken from a file (*_from_fileid):
%% accepted, with no effect (chat destinations are users by number).
-define(UNUSED, ["global_number", "random_from_fileid", "offline_from_fileid",
                 "fileid_delimiter", "bosh_path", "websocket_path"]).

%% @doc Tsung's `ts_jabber' sessions and their `<jabber>' element, to a tcp, ssl, bosh or
%% bosh_ssl server.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_jabber", element => jabber,
             servers => ["tcp", "ssl", "bosh", "bosh_ssl", "websocket", "websocket_ssl"],
             attributes => [type, ack, size, destination, room, nick, node, data, show, id,
                            node_type, version],
             ignored => [id, version], options => ?OPTIONS}.

%% @doc The spec of a `<jabber>' element and the target it uses.
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(Req, E, Ctx) ->
    check_attrs(E, Ctx),
    Tsung = req(E, type, Ctx),
    Type = type(E, Tsung, Ctx),
    Spec0 = maps:from_list([{K, V} || {K, V} <- [{ack, ack(E, Ctx)} | attrs(E, Ctx)],
                                      V =/= undefined]),
    Spec = case Type of
               connect -> maps:merge(maps:merge(maps:merge(Spec0, transport(E, Ctx)),
                                               options(E, Ctx)),
                                     credentials(E));
               auth_sasl -> Spec0#{mechanism => mechanism(E, Ctx)};
               pubsub_create ->
                   Spec0#{config => config(attr(E, data)),
                          node_type => bin(attr(E, node_type, ""))};
               _ -> Spec0
           end,
    {Name, Target} = beamscale_load_tsung_request:server(E, Ctx),
    %% The request's `<match>'es read the stanza that acknowledged it, as Tsung's do; its
    %% `<dyn_variable>'s are said not applied (`beamscale_load_tsung_dom').
    Keys = maps:with([match], beamscale_load_tsung_dyn:request_keys(Req, none, Ctx)),
    case beamscale_load_xmpp_user:check(Spec#{type => Type}) of
        {ok, #{ack := Ack}} when Keys =/= #{}, Type =:= close orelse Ack =:= no_ack ->
            fail(Req, Ctx, "<match> needs a reply: not on a close or a request with "
                           "ack=\"no_ack\"", []);
        {ok, _} -> {maps:merge(Spec#{type => Type, target => Name}, Keys), [{Name, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "type=\"~ts\": ~ts: ~ts", [Tsung, Key, Msg])
    end.

type(E, Tsung, Ctx) ->
    Flat = [case C of $: -> $_; _ -> C end || C <- Tsung],
    Known = [atom_to_list(T) || T <- beamscale_load_xmpp_user:types()],
    case lists:member(Flat, Known) of
        true -> list_to_existing_atom(Flat);
        false -> fail(E, Ctx, "type=\"~ts\" is not supported (supported: ~ts)",
                      [Tsung, lists:join(", ", [[case C of $_ -> $:; _ -> C end || C <- K]
                                                || K <- Known])])
    end.

%% Tsung's bidi_ack (starttls) waits as local does; global (all users at one point) too.
%% Tsung 1.7's `parse' without a `regexp' (refused: not among the attributes read) acknowledges
%% on the first bytes received, as local does.
ack(E, Ctx) ->
    case attr(E, ack) of
        undefined -> undefined;
        "no_ack" -> no_ack;
        A when A =:= "local"; A =:= "bidi_ack"; A =:= "parse" -> local;
        "global" -> global;
        A -> fail(E, Ctx, "ack=\"~ts\" (expected no_ack, local, parse, bidi_ack or global)",
                  [A])
    end.

attrs(E, Ctx) ->
    [{size, int(E, size, Ctx)},
     {destination, dest(E, Ctx)} |
     [{K, bin(attr(E, K))} || K <- [room, nick, node, show]]]
    ++ [{data, bin(attr(E, data))} || attr(E, type) =:= "raw"].

%% pubsub:create's `data': Tsung's Erlang list of `{'field', 'value'}' pairs, read as text (no
%% atom is made of it).
config(undefined) -> [];
config(Text) ->
    case re:run(Text, "\\{\\s*'([^']*)'\\s*,\\s*'([^']*)'\\s*\\}",
                [global, {capture, all_but_first, binary}, unicode]) of
        {match, Pairs} -> [{K, V} || [K, V] <- Pairs];
        nomatch -> []
    end.

%% A server of type bosh (bosh_ssl: over TLS): XMPP over BOSH at the file's `<option
%% name="bosh_path">' (untyped, as in Tsung), or at ejabberd's and Tsung's default path. Of type
%% websocket (websocket_ssl: over TLS): XMPP over WebSocket (RFC 7395's `<open/>', which Tsung
%% sends for `version="websocket"') at `<option name="websocket_path">', or Tsung's `/chat'.
transport(E, #{servers := [{_, _, _, T}]} = Ctx) ->
    Ws = T =:= "websocket" orelse T =:= "websocket_ssl",
    case attr(E, version) of
        V when V =:= undefined; V =:= "1.0"; V =:= "websocket", Ws -> ok;
        V -> fail(E, Ctx, "version=\"~ts\" (expected 1.0, or websocket on a server of type "
                          "websocket or websocket_ssl)", [V])
    end,
    if T =:= "bosh"; T =:= "bosh_ssl" -> #{bosh => path(Ctx, "bosh_path", "/http-bind")};
       Ws -> #{websocket => path(Ctx, "websocket_path", "/chat")};
       true -> #{}
    end;
transport(_E, _Ctx) -> #{}.

path(Ctx, Option, Default) ->
    case [V || {_, O, V} <- maps:get(options, Ctx, []), O =:= Option] of
        [] -> bin(Default);
        Paths -> bin(lists:last(Paths))
    end.

%% `<xmpp_authenticate username passwd>' inside a connect: this user's own name and password
%% (with subst, from its variables), used as they are.
credentials(#xmlElement{content = C}) ->
    case [X || #xmlElement{name = xmpp_authenticate} = X <- C] of
        [X | _] -> #{username => bin(attr(X, username)), passwd => bin(attr(X, passwd)),
                     userid_max => 0};
        [] -> #{}
    end.

dest(E, Ctx) ->
    case attr(E, destination) of
        undefined -> undefined;
        D when D =:= "online"; D =:= "offline"; D =:= "random"; D =:= "unique";
               D =:= "previous" -> list_to_existing_atom(D);
        D -> fail(E, Ctx, "destination=\"~ts\" (expected online, offline, random, unique or "
                          "previous)", [D])
    end.

mechanism(E, Ctx) ->
    case attr(E, mechanism) of
        undefined -> plain;
        "PLAIN" -> plain;
        "DIGEST-MD5" -> digest_md5;
        "ANONYMOUS" -> anonymous;
        M -> fail(E, Ctx, "mechanism=\"~ts\" (expected PLAIN, DIGEST-MD5 or ANONYMOUS)", [M])
    end.

%% The file's `<option type="ts_jabber">'s.
options(E, Ctx) ->
    Opts = [{N, V} || {"ts_jabber", N, V} <- maps:get(options, Ctx, [])],
    [fail(E, Ctx, "<option type=\"ts_jabber\" name=\"~ts\"> is not supported (supported: ~ts)",
          [N, lists:join(", ", ?OPTIONS)]) || {N, _} <- Opts, not lists:member(N, ?OPTIONS)],
    maps:from_list([{K, V} || {N, Text} <- Opts, not lists:member(N, ?UNUSED),
                              {K, V} <- [option(N, Text, E, Ctx)]]).

option("userid_max", Text, E, Ctx) -> {userid_max, number(E, "userid_max", Text, Ctx)};
option(N, Text, _E, _Ctx) -> {list_to_existing_atom(N), bin(Text)}.

int(E, Name, Ctx) ->
    case attr(E, Name) of
        undefined -> undefined;
        V -> number(E, Name, V, Ctx)
    end.

number(E, Name, V, Ctx) ->
    try list_to_integer(V)
    catch error:badarg -> fail(E, Ctx, "~ts=\"~ts\" (expected an integer)", [Name, V])
    end.

bin(undefined) -> undefined;
bin(V) -> unicode:characters_to_binary(V).
