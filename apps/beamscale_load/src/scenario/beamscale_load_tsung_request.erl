%% @doc The `<request>' element of a Tsung session, translated (pure) into an `http', `rpc',
%% `raw', `websocket', `mysql' or `pgsql' step and the targets it uses: `<http url method version
%% contents content_type>' with its `<http_header>'s, the SMP-for-IO thesis's `<rpc type module
%% function arguments node>', `ts_raw''s `<raw data datasize ack>', `ts_websocket''s
%% `<websocket>', `ts_mysql''s `<mysql type database username password>' and `ts_pgsql''s
%% `<pgsql>' (`beamscale_load_tsung_pgsql').
%% Part of `beamscale_load_tsung_xml'; errors are thrown as it throws them.
-module(beamscale_load_tsung_request).

-export([request/2, node_name/1]).

-include_lib("xmerl/include/xmerl.hrl").

%% HTTP methods: a closed set, so that no atom is made of a file's text.
-define(METHODS, [get, head, post, put, delete, options, patch, trace, connect]).
%% Erlang's longest atom, in characters.
-define(MAX_ATOM, 255).
%% Tsung does not check a server's certificate.
-define(TSUNG_TLS, #{verify => verify_none}).

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, req/3, bool/4,
                                   fail/4]).

%% @doc The step of a `<request>' and the `{Name, Target}' pairs it uses. `Ctx' holds the
%% session's `type' (http or rpc), the `<server>'s and the targets of processing instructions.
-spec request(#xmlElement{}, map()) ->
    {{http | rpc | raw | websocket | mysql | pgsql, map()}, [{atom(), map()}]}.
request(E, #{type := Type} = Ctx) ->
    check_attrs(E, Ctx),
    Subst = case attr(E, subst, "false") of
                "all_except_body" -> fail(E, Ctx, "subst=\"all_except_body\" is not supported",
                                          []);
                _ -> bool(E, subst, false, Ctx)
            end,
    Kids = children(E, [http, rpc, raw, websocket, mysql, pgsql, dyn_variable, match], Ctx),
    case [K || #xmlElement{name = N} = K <- Kids, N =/= dyn_variable, N =/= match] of
        [#xmlElement{name = Type} = R] when Type =:= http ->
            [literal(R, Ctx) || not Subst],
            {{http, Spec}, Used} = http(R, Ctx),
            Keys = beamscale_load_tsung_dyn:request_keys(E, R, Ctx),
            %% Tsung keeps every HTTP user's cookies.
            {{http, maps:merge(Spec#{cookies => true}, Keys)}, Used};
        [#xmlElement{name = websocket} = R] when Type =:= websocket ->
            [literal(R, Ctx) || not Subst],
            beamscale_load_tsung_dyn:calls(R, values(R), Ctx),
            {{websocket, Spec}, Used} = websocket(R, Ctx),
            Keys = beamscale_load_tsung_dyn:request_keys(E, none, Ctx),
            [fail(E, Ctx, "<dyn_variable> and <match> need a reply: not on a close or a message "
                          "with ack=\"no_ack\"", [])
             || Keys =/= #{}, maps:get(type, Spec) =:= close orelse
                    maps:get(ack, Spec, reply) =:= no_ack],
            {{websocket, maps:merge(Spec, Keys)}, Used};
        [#xmlElement{name = Type} = R] ->
            static(E, R, Subst, Ctx),
            case Type of
                raw -> raw(R, Ctx);
                websocket -> websocket(R, Ctx);
                mysql -> mysql(R, Ctx);
                pgsql -> pgsql(R, Ctx);
                _ -> rpc(R, Ctx)
            end;
        [#xmlElement{name = Other} = R] ->
            fail(R, Ctx, "<~ts> in a session of type ts_~ts", [Other, Type]);
        _ -> fail(E, Ctx, "<request> needs one <~ts> element", [Type])
    end.

%% `ts_raw': `data' or `datasize' bytes to the `<server>' (tcp, ssl or udp); `ack' local waits
%% for the first bytes back, no_ack does not. Tsung's `global' ack (a barrier across users) has
%% no counterpart here and is refused.
raw(E, Ctx) ->
    check_attrs(E, Ctx),
    Bytes = case {attr(E, data), attr(E, datasize)} of
                {undefined, undefined} -> fail(E, Ctx, "<raw> needs data or datasize", []);
                {D, undefined} -> #{data => unicode:characters_to_binary(D)};
                {undefined, _} -> #{datasize => beamscale_load_tsung_dom:positive_integer(
                                                  E, datasize, Ctx)};
                _ -> fail(E, Ctx, "<raw> has both data and datasize", [])
            end,
    Ack = case attr(E, ack, "local") of
              "local" -> local;
              "no_ack" -> no_ack;
              "global" -> fail(E, Ctx, "ack=\"global\" is not supported (a barrier across "
                                       "users; use local or no_ack)", []);
              A -> fail(E, Ctx, "ack=\"~ts\" (expected local or no_ack)", [A])
          end,
    {Name, Target} = server(E, Ctx),
    Spec = Bytes#{ack => Ack},
    %% Checked here too, so that a size too big names the <raw> element's line.
    case beamscale_load_raw:check(Spec, maps:merge(#{host => "", port => 0},
                                                   maps:with([transport], Target))) of
        {ok, _} -> {{raw, Spec#{target => Name}}, [{Name, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.

%% Without subst="true" Tsung sends `%%_name%%' as it is; beamscale would fill it, so it refuses.
%% Variables, extraction and checks are built for HTTP and WebSocket requests; elsewhere `subst'
%% with nothing to substitute changes nothing and is accepted, and the rest is refused.
static(E, R, Subst, Ctx) ->
    [literal(R, Ctx) || not Subst],
    [fail(E, Ctx, "subst=\"true\" with %%...%% is supported on http and websocket requests "
                  "only", [])
     || Subst, string:find(values(R), "%%") =/= nomatch],
    [fail(E, Ctx, "<dyn_variable> and <match> are supported on http and websocket requests", [])
     || beamscale_load_tsung_dyn:request_keys(E, none, Ctx) =/= #{}],
    ok.

literal(#xmlElement{attributes = As} = E, Ctx) ->
    [fail(E, Ctx, "~ts holds %%_ but the request has no subst=\"true\"", [N])
     || #xmlAttribute{name = N, value = V} <- As, string:find(V, "%%_") =/= nomatch],
    [fail(E, Ctx, "<~ts>'s text holds %%_ but the request has no subst=\"true\"",
          [E#xmlElement.name])
     || string:find(text(E), "%%_") =/= nomatch],
    ok.

http(E, Ctx) ->
    check_attrs(E, Ctx),
    Version = case attr(E, version, "1.1") of
                  V when V =:= "1.1"; V =:= "1.0" -> V;
                  V -> fail(E, Ctx, "version \"~ts\" is not supported (1.1 or 1.0)", [V])
              end,
    {Target, Path} = url(E, Ctx),
    Kids = children(E, beamscale_load_tsung_dyn:http_children(), Ctx),
    Headers = [{"Content-Type", CT} || CT <- [attr(E, content_type)], CT =/= undefined]
              ++ [{"If-Modified-Since", D} || D <- [attr(E, if_modified_since)], D =/= undefined]
              ++ [header(H, Ctx) || H <- Kids, H#xmlElement.name =:= http_header]
              ++ [soap(H, Ctx) || H <- Kids, H#xmlElement.name =:= soap],
    beamscale_load_tsung_dyn:calls(E, values(E), Ctx),
    Spec0 = #{method => method(E, Ctx), path => Path,
             headers => Headers,
             body => unicode:characters_to_binary(attr(E, contents, "")),
             target => element(1, Target)},
    Spec = case Version of
               "1.1" -> Spec0;
               _ -> Spec0#{version => Version}
           end,
    {{http, Spec}, [Target]}.

%% `<soap action>': the SOAPAction header of a SOAP request.
soap(H, Ctx) ->
    check_attrs(H, Ctx),
    {"SOAPAction", req(H, action, Ctx)}.

method(E, Ctx) ->
    M = attr(E, method, "GET"),
    case [A || A <- ?METHODS, atom_to_list(A) =:= string:lowercase(M)] of
        [A] -> A;
        [] -> fail(E, Ctx, "method \"~ts\" (known: ~ts)",
                   [lists:sublist(M, 40), lists:join(", ", [string:uppercase(atom_to_list(A))
                                                            || A <- ?METHODS])])
    end.

%% Module, function, node and address names must be atoms to be called or reached: each is
%% checked to fit one, and a file (1 MB at most) can only hold so many.
atom(_E, _Name, Text, _Ctx) when length(Text) =< ?MAX_ATOM -> list_to_atom(Text);
atom(E, Name, _Text, Ctx) ->
    fail(E, Ctx, "~ts is longer than ~b characters (Erlang's longest name)", [Name, ?MAX_ATOM]).

header(H, Ctx) ->
    check_attrs(H, Ctx),
    {req(H, name, Ctx), req(H, value, Ctx)}.

%% `ts_websocket': `<websocket type="connect" path subprotocols>', `<websocket type="message"
%% frame="text|binary" ack="no_ack">DATA</websocket>' (without no_ack: wait for the reply),
%% `<websocket type="close">', to the `<server>' (tcp or ssl).
websocket(E, Ctx) ->
    check_attrs(E, Ctx),
    Spec = case req(E, type, Ctx) of
               "connect" -> maps:merge(#{type => connect, path => attr(E, path, "/")},
                                       maps:from_list([{subprotocols, P}
                                                       || P <- [attr(E, subprotocols)],
                                                          P =/= undefined]));
               "message" -> #{type => message, data => unicode:characters_to_binary(text(E)),
                              frame => choice(E, frame, ["text", "binary"], Ctx),
                              ack => case attr(E, ack) of
                                         "no_ack" -> no_ack;
                                         undefined -> reply;
                                         A -> fail(E, Ctx, "ack=\"~ts\" (expected no_ack, or "
                                                           "none to wait for the reply)", [A])
                                     end};
               "close" -> #{type => close};
               T -> fail(E, Ctx, "type=\"~ts\" (expected connect, message or close)", [T])
           end,
    {Name, Target} = server(E, Ctx),
    {{websocket, Spec#{target => Name}}, [{Name, Target}]}.

%% `ts_mysql': `<mysql type="connect">' (the server's handshake), `<mysql type="authenticate"
%% database username password>', `<mysql type="sql">SQL</mysql>', `<mysql type="close">', to the
%% `<server>' (tcp).
mysql(E, Ctx) ->
    check_attrs(E, Ctx),
    Spec = case req(E, type, Ctx) of
               "connect" -> #{type => connect};
               "authenticate" -> #{type => authenticate, user => req(E, username, Ctx),
                                   password => attr(E, password, ""),
                                   database => attr(E, database, "")};
               "sql" -> #{type => sql, 'query' => unicode:characters_to_binary(text(E))};
               "close" -> #{type => close};
               T -> fail(E, Ctx, "type=\"~ts\" (expected connect, authenticate, sql or close)",
                         [T])
           end,
    {Name, Target} = server(E, Ctx),
    %% Checked here too, so that an empty query names the <mysql> element's line.
    case beamscale_load_mysql:check(Spec, #{host => "", port => 0}) of
        {ok, _} -> {{mysql, Spec#{target => Name}}, [{Name, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.

%% `ts_pgsql' (`beamscale_load_tsung_pgsql'), to the `<server>' over tcp, or ssl (the SSLRequest
%% then TLS, the certificate not checked, as Tsung does).
pgsql(E, Ctx) ->
    Spec = beamscale_load_tsung_pgsql:spec(E, Ctx),
    {Name, Target} = server(E, Ctx),
    {{pgsql, Spec#{target => Name}}, [{Name, Target}]}.

%% Every attribute value and text inside an element, one string.
values(#xmlElement{attributes = As, content = C}) ->
    lists:append([V || #xmlAttribute{value = V} <- As, is_list(V)]
                 ++ [case X of
                         #xmlText{value = V} -> V;
                         #xmlElement{} -> values(X);
                         _ -> ""
                     end || X <- C]).

%% The text inside an element (CDATA included).
text(#xmlElement{content = C}) -> lists:append([V || #xmlText{value = V} <- C]).

choice(E, Name, [Default | _] = Known, Ctx) ->
    V = attr(E, Name, Default),
    case lists:member(V, Known) of
        true -> list_to_existing_atom(V);
        false -> fail(E, Ctx, "~ts=\"~ts\" (expected ~ts)", [Name, V, lists:join(" or ", Known)])
    end.

%% A relative URL goes to the `<server>'; an absolute one (http[s]://host[:port]/path) to its
%% host (https: TLS, the certificate not checked, as Tsung does).
url(E, Ctx) ->
    case req(E, url, Ctx) of
        "/" ++ _ = Path -> {server(E, Ctx), Path};
        "http://" ++ Rest -> absolute(E, Ctx, Rest, "80", "", #{});
        "https://" ++ Rest -> absolute(E, Ctx, Rest, "443", "https://", #{tls => ?TSUNG_TLS});
        Url -> fail(E, Ctx, "url \"~ts\" is not supported (a path, or http[s]://host:port/path)",
                    [Url])
    end.

absolute(E, Ctx, Rest, DefaultPort, Scheme, Extra) ->
    {HostPort, Path} = case string:split(Rest, "/") of
                           [HP, P] -> {HP, "/" ++ P};
                           [HP] -> {HP, "/"}
                       end,
    Address = case string:split(HostPort, ":") of
                  [_, _] -> HostPort;
                  [_] -> HostPort ++ ":" ++ DefaultPort
              end,
    {{atom(E, url, Scheme ++ Address, Ctx), Extra#{address => Address}}, Path}.

%% The thesis's `<rpc type module function arguments node>': `arguments' are the terms between
%% the parentheses of the call (arguments="500" is write(500)); beamscale's `expect' is the
%% pattern a call's result must match (`beamscale_load_expect:parse/1').
rpc(E, #{pis := Pis} = Ctx) ->
    check_attrs(E, Ctx),
    Type = case req(E, type, Ctx) of
               "call" -> call;
               "cast" -> cast;
               T -> fail(E, Ctx, "type \"~ts\" (expected call or cast)", [T])
           end,
    Args = case beamscale_format_terms:term("[" ++ attr(E, arguments, "") ++ "]") of
               {ok, A} -> A;
               error -> fail(E, Ctx, "arguments \"~ts\" are not Erlang terms separated by commas",
                             [attr(E, arguments)])
           end,
    Mfa = {atom(E, module, req(E, module, Ctx), Ctx),
           atom(E, function, req(E, function, Ctx), Ctx), Args},
    NodeText = req(E, node, Ctx),
    %% The targets of processing instructions are found by name, without making an atom.
    Short = node_name(NodeText),
    {Name, Used} = case [N || {N, _} <- Pis, atom_to_list(N) =:= Short] of
                       [PiName | _] -> {PiName, []};
                       [] ->
                           [fail(E, Ctx, "node \"~ts\" is not name@host", [NodeText])
                            || not lists:member($@, NodeText)],
                           Node = atom(E, node, NodeText, Ctx),
                           {Node, [{Node, #{node => Node}}]}
                   end,
    {{rpc, maps:merge(#{Type => Mfa, target => Name}, expect(E, Type, Ctx))}, Used}.

expect(E, Type, Ctx) ->
    case {attr(E, expect), Type} of
        {undefined, _} -> #{};
        {_, cast} -> fail(E, Ctx, "expect on a cast: a cast has no result (type=\"call\")", []);
        {Text, call} ->
            case beamscale_load_expect:parse(Text) of
                {ok, P} -> #{expect => P};
                {error, Msg} -> fail(E, Ctx, "expect \"~ts\": ~ts", [lists:sublist(Text, 60), Msg])
            end
    end.

%% @doc The name part of `name@host' (all of it when there is no host).
-spec node_name(string()) -> string().
node_name(Text) -> hd(string:split(Text, "@")).

%% The `<server>' behind relative URLs, raw, websocket, mysql and pgsql requests: one, over tcp,
%% ssl (TLS, the certificate not checked, as Tsung does; not mysql) or udp (raw only).
server(Http, #{servers := Servers} = Ctx) ->
    case Servers of
        [{S, Host, Port, Type}] ->
            Address = Host ++ ":" ++ integer_to_list(Port),
            case {Type, Http#xmlElement.name} of
                {"tcp", _} -> {server, #{address => Address}};
                {"ssl", N} when N =/= mysql -> {server, #{address => Address, tls => ?TSUNG_TLS}};
                {"udp", raw} -> {server, #{address => Address, transport => udp}};
                _ -> fail(S, Ctx, "server type \"~ts\" is not supported for <~ts> (tcp, ssl; "
                                  "udp for raw; tcp for mysql)", [Type, Http#xmlElement.name])
            end;
        [] -> fail(Http, Ctx, "<~ts> needs a <server> (or an absolute url)",
                   [Http#xmlElement.name]);
        [_, {S, _, _, _} | _] ->
            fail(S, Ctx, "several <server> elements: Tsung spreads sessions over them, beamscale "
                         "sends to one", [])
    end.
