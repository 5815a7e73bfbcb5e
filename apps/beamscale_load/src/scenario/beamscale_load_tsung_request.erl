%% @doc The `<request>' element of a Tsung session, translated (pure) into an `http' or `rpc'
%% step and the targets it uses: `<http url method version contents content_type>' with its
%% `<http_header>'s, and the SMP-for-IO thesis's `<rpc type module function arguments node>'.
%% Part of `beamscale_load_tsung_xml'; errors are thrown as it throws them.
-module(beamscale_load_tsung_request).

-export([request/2, node_name/1]).

-include_lib("xmerl/include/xmerl.hrl").

%% HTTP methods: a closed set, so that no atom is made of a file's text.
-define(METHODS, [get, head, post, put, delete, options, patch, trace, connect]).
%% Erlang's longest atom, in characters.
-define(MAX_ATOM, 255).

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, req/3, bool/4,
                                   fail/4]).

%% @doc The step of a `<request>' and the `{Name, Target}' pairs it uses. `Ctx' holds the
%% session's `type' (http or rpc), the `<server>'s and the targets of processing instructions.
-spec request(#xmlElement{}, map()) -> {{http | rpc, map()}, [{atom(), map()}]}.
request(E, #{type := Type} = Ctx) ->
    check_attrs(E, Ctx),
    [fail(E, Ctx, "subst=\"true\" is not supported (beamscale has no dynamic variables)", [])
     || bool(E, subst, false, Ctx)],
    case children(E, [http, rpc], Ctx) of
        [#xmlElement{name = Type} = R] when Type =:= http -> http(R, Ctx);
        [#xmlElement{name = Type} = R] -> rpc(R, Ctx);
        [#xmlElement{name = Other} = R] ->
            fail(R, Ctx, "<~ts> in a session of type ts_~ts", [Other, Type]);
        _ -> fail(E, Ctx, "<request> needs one <http> or <rpc> element", [])
    end.

http(E, Ctx) ->
    check_attrs(E, Ctx),
    [fail(E, Ctx, "version \"~ts\" is not supported (beamscale sends HTTP/1.1 with keep-alive)",
          [V]) || V <- [attr(E, version, "1.1")], V =/= "1.1"],
    {Target, Path} = url(E, Ctx),
    Headers = [{"Content-Type", CT} || CT <- [attr(E, content_type)], CT =/= undefined]
              ++ [{"If-Modified-Since", D} || D <- [attr(E, if_modified_since)], D =/= undefined]
              ++ [header(H, Ctx) || H <- children(E, [http_header], Ctx)],
    Spec = #{method => method(E, Ctx), path => Path,
             headers => Headers,
             body => unicode:characters_to_binary(attr(E, contents, "")),
             target => element(1, Target)},
    {{http, Spec}, [{Name, #{address => A}} || {Name, A} <- [Target]]}.

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
            {{atom(E, url, Address, Ctx), Address}, Path};
        Url -> fail(E, Ctx, "url \"~ts\" is not supported (a path, or http://host:port/path)",
                    [Url])
    end.

%% The thesis's `<rpc type module function arguments node>': `arguments' are the terms between
%% the parentheses of the call (arguments="500" is write(500)).
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
