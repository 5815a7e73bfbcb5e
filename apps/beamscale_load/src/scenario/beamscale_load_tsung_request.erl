%% @doc The `<request>' element of a Tsung session, translated (pure) into an `http' or `rpc'
%% step and the targets it uses: `<http url method version contents content_type>' with its
%% `<http_header>'s, and the SMP-for-IO thesis's `<rpc type module function arguments node>'.
%% Part of `beamscale_load_tsung_xml'; errors are thrown as it throws them.
-module(beamscale_load_tsung_request).

-export([request/2, node_name/1]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, req/3, bool/4,
                                   fail/4]).

%% @doc The step of a `<request>' and the `{Name, Target}' pairs it uses. `Ctx' holds the
%% session's `type' (http or rpc), the `<server>'s and the targets of processing instructions.
-spec request(#xmlElement{}, map()) -> {{http | rpc, map()}, [{atom(), map()}]}.
request(E, #{type := Type} = Ctx) ->
    check_attrs(E, Ctx),
    Subst = case attr(E, subst, "false") of
                "all_except_body" -> fail(E, Ctx, "subst=\"all_except_body\" is not supported",
                                          []);
                _ -> bool(E, subst, false, Ctx)
            end,
    Kids = children(E, [http, rpc, dyn_variable, match], Ctx),
    case [K || #xmlElement{name = N} = K <- Kids, N =:= http orelse N =:= rpc] of
        [#xmlElement{name = Type} = R] when Type =:= http ->
            [literal(R, Ctx) || not Subst],
            {{http, Spec}, Used} = http(R, Ctx),
            Keys = beamscale_load_tsung_dyn:request_keys(E, R, Ctx),
            %% Tsung keeps every HTTP user's cookies.
            {{http, maps:merge(Spec#{cookies => true}, Keys)}, Used};
        [#xmlElement{name = Type} = R] ->
            [literal(R, Ctx) || not Subst],
            [fail(E, Ctx, "<dyn_variable> and <match> are supported on http requests", [])
             || beamscale_load_tsung_dyn:request_keys(E, none, Ctx) =/= #{}],
            rpc(R, Ctx);
        [#xmlElement{name = Other} = R] ->
            fail(R, Ctx, "<~ts> in a session of type ts_~ts", [Other, Type]);
        _ -> fail(E, Ctx, "<request> needs one <http> or <rpc> element", [])
    end.

%% Without subst="true" Tsung sends `%%_name%%' as it is; beamscale would fill it, so it refuses.
literal(#xmlElement{attributes = As} = E, Ctx) ->
    [fail(E, Ctx, "~ts holds %%_ but the request has no subst=\"true\"", [N])
     || #xmlAttribute{name = N, value = V} <- As, string:find(V, "%%_") =/= nomatch],
    ok.

http(E, Ctx) ->
    check_attrs(E, Ctx),
    [fail(E, Ctx, "version \"~ts\" is not supported (beamscale sends HTTP/1.1 with keep-alive)",
          [V]) || V <- [attr(E, version, "1.1")], V =/= "1.1"],
    {Target, Path} = url(E, Ctx),
    Headers = [{"Content-Type", CT} || CT <- [attr(E, content_type)], CT =/= undefined]
              ++ [{"If-Modified-Since", D} || D <- [attr(E, if_modified_since)], D =/= undefined]
              ++ [header(H, Ctx) || H <- children(E, [http_header, add_cookie, www_authenticate],
                                                  Ctx), H#xmlElement.name =:= http_header],
    Spec = #{method => list_to_atom(string:lowercase(attr(E, method, "GET"))), path => Path,
             headers => Headers,
             body => unicode:characters_to_binary(attr(E, contents, "")),
             target => element(1, Target)},
    {{http, Spec}, [{Name, #{address => A}} || {Name, A} <- [Target]]}.

header(H, Ctx) ->
    check_attrs(H, Ctx),
    {req(H, name, Ctx), req(H, value, Ctx)}.

%% A relative URL goes to the `<server>'; an absolute one (http://host:port/path) to its host.
url(E, Ctx) ->
    case req(E, url, Ctx) of
        "/" ++ _ = Path -> {server(E, Ctx), Path};
        "http://" ++ Rest ->
            {HostPort, Path} = case string:split(Rest, "/") of
                                   [HP, P] -> {HP, "/" ++ P};
                                   [HP] -> {HP, "/"}
                               end,
            Address = case string:split(HostPort, ":") of
                          [_, _] -> HostPort;
                          [_] -> HostPort ++ ":80"
                      end,
            {{list_to_atom(Address), Address}, Path};
        Url -> fail(E, Ctx, "url \"~ts\" is not supported (a path, or http://host:port/path)",
                    [Url])
    end.

%% The thesis's `<rpc type module function arguments node>': `arguments' are the terms between
%% the parentheses of the call (arguments="500" is write(500)).
rpc(E, #{pis := Pis} = Ctx) ->
    check_attrs(E, Ctx),
    Type = case req(E, type, Ctx) of
               T when T =:= "call"; T =:= "cast" -> list_to_atom(T);
               T -> fail(E, Ctx, "type \"~ts\" (expected call or cast)", [T])
           end,
    Args = case beamscale_format_terms:term("[" ++ attr(E, arguments, "") ++ "]") of
               {ok, A} -> A;
               error -> fail(E, Ctx, "arguments \"~ts\" are not Erlang terms separated by commas",
                             [attr(E, arguments)])
           end,
    Mfa = {list_to_atom(req(E, module, Ctx)), list_to_atom(req(E, function, Ctx)), Args},
    NodeText = req(E, node, Ctx),
    {Name, Used} = case lists:keyfind(list_to_atom(node_name(NodeText)), 1, Pis) of
                       {PiName, _} -> {PiName, []};
                       false ->
                           [fail(E, Ctx, "node \"~ts\" is not name@host", [NodeText])
                            || not lists:member($@, NodeText)],
                           Node = list_to_atom(NodeText),
                           {Node, [{Node, #{node => Node}}]}
                   end,
    {{rpc, #{Type => Mfa, target => Name}}, Used}.

%% @doc The name part of `name@host' (all of it when there is no host).
-spec node_name(string()) -> string().
node_name(Text) -> hd(string:split(Text, "@")).

%% The `<server>' behind relative URLs: one, over TCP.
server(Http, #{servers := Servers} = Ctx) ->
    case Servers of
        [{_, Host, Port, "tcp"}] -> {server, Host ++ ":" ++ integer_to_list(Port)};
        [{S, _, _, Type}] ->
            fail(S, Ctx, "server type \"~ts\" is not supported (only tcp)", [Type]);
        [] -> fail(Http, Ctx, "a relative url needs a <server>", []);
        [_, {S, _, _, _} | _] ->
            fail(S, Ctx, "several <server> elements: Tsung spreads sessions over them, beamscale "
                         "sends to one", [])
    end.
