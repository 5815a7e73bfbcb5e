%% @doc XPath over a response body (docs/scenario.md, "Taken from responses"): a documented
%% subset evaluated by `xmerl_xpath' (`/a/b/text()', `//tag/@attr', `//tag[@attr='v']/@x',
%% `//tag/text()'), the first node's text, or every node's (at most 1000) for a list variable.
%% The body is hostile input: it is read with `xmerl_sax_parser' (names stay strings), a
%% `<!DOCTYPE' or `<!ENTITY' is refused so no entity can expand, names become atoms only when
%% they exist already (a name the expression does not hold can match nothing, so it needs none),
%% and the parse runs in a process of its own bounded in heap, time and input size. A body that
%% is not well-formed XML gives no value.
-module(beamscale_load_xpath).

-export([compile/1, eval/2, values/2, tree/1]).
-export_type([xpath/0]).

-include_lib("xmerl/include/xmerl.hrl").

-type xpath() :: {xpath, string()}.

%% Responses read for a variable: a page of a few hundred kB; more is not parsed.
-define(MAX_BODY_BYTES, 1024 * 1024).
%% xmerl's records take about 30 times the text: room for ?MAX_BODY_BYTES.
-define(MAX_HEAP_WORDS, 8 * 1024 * 1024).
%% A 1 MB document parses in well under a second; past this the user goes on without the value.
-define(EVAL_TIMEOUT_MS, 2000).
%% The values a list variable keeps, as JSONPath's and `re''s `all'.
-define(MAX_VALUES, 1000).
%% An expression is written in a scenario: short.
-define(MAX_EXPR, 1000).

%% @doc Check an expression (at validation; its names become atoms, as xmerl_xpath makes them).
%% The parser's modules are loaded here too: loading them (seconds on a busy host) would
%% otherwise fall in the first response's time bound and lose its value.
-spec compile(string() | binary()) -> {ok, xpath()} | {error, string()}.
compile(Expr0) ->
    _ = tree(<<"<a/>">>),
    Expr = unicode:characters_to_list(Expr0),
    Doc = #xmlElement{name = '$none', parents = [], pos = 1},
    if length(Expr) > ?MAX_EXPR -> {error, "longer than 1000 characters"};
       true ->
           try xmerl_xpath:string(Expr, Doc) of
               _ -> {ok, {xpath, Expr}}
           catch _:_ -> {error, "not an XPath expression xmerl_xpath evaluates"}
           end
    end.

%% @doc The text of the first node `X' selects in `Body', or `error'.
-spec eval(xpath(), binary()) -> {ok, binary()} | error.
eval(X, Body) ->
    case values(X, Body) of
        {ok, [First | _]} -> {ok, First};
        error -> error
    end.

%% @doc The texts of the nodes `X' selects in `Body', in document order, at most 1000 (as a
%% JSONPath's list), or `error' when it selects none.
-spec values(xpath(), binary()) -> {ok, [binary(), ...]} | error.
values(_, Body) when byte_size(Body) > ?MAX_BODY_BYTES -> error;
values({xpath, Expr}, Body) ->
    case binary:match(Body, [<<"<!DOCTYPE">>, <<"<!ENTITY">>]) of
        nomatch ->
            %% The texts are built in the bounded process too: its heap bounds them.
            beamscale_load_bounded:call(fun() -> texts(xmerl_xpath:string(Expr, tree(Body))) end,
                                        ?MAX_HEAP_WORDS, ?EVAL_TIMEOUT_MS);
        _ -> error
    end.

texts([_ | _] = Nodes) -> {ok, [node_text(N) || N <- lists:sublist(Nodes, ?MAX_VALUES)]};
texts(_) -> error.

node_text(#xmlText{value = V}) -> unicode:characters_to_binary(V);
node_text(#xmlAttribute{value = V}) -> unicode:characters_to_binary(V);
node_text(#xmlElement{} = E) -> unicode:characters_to_binary(text(E));
node_text(Other) -> unicode:characters_to_binary(io_lib:format("~tp", [Other])).

text(#xmlElement{content = C}) -> lists:append([text(X) || X <- C]);
text(#xmlText{value = V}) -> V;
text(_) -> [].

%% @doc The document's root element as xmerl records, built from SAX events (names that are
%% not atoms yet read as '$unknown').
-spec tree(binary()) -> #xmlElement{}.
tree(Body) ->
    {ok, [[Root]], _} = xmerl_sax_parser:stream(Body, [{event_fun, fun event/3},
                                                     {event_state, [[]]}]),
    Root.

event({startElement, _, Name, _, Attrs}, _, [Kids | _] = Stack) ->
    Parents = [{N, P} || {N, P, _} <- parents(Stack)],
    Pos = length(Kids) + 1,
    A = atom(Name),
    As = [#xmlAttribute{name = atom(AN), value = V, parents = [{A, Pos} | Parents], pos = I}
          || {I, {_, _, AN, V}} <- lists:zip(lists:seq(1, length(Attrs)), Attrs)],
    [[], {open, #xmlElement{name = A, expanded_name = A, parents = Parents, pos = Pos,
                            attributes = As, namespace = #xmlNamespace{}}} | Stack];
event({characters, S}, _, [Kids | Rest]) ->
    [[#xmlText{value = S, pos = length(Kids) + 1} | Kids] | Rest];
event({endElement, _, _, _}, _, [Kids, {open, E} | [Up | Rest]]) ->
    #xmlElement{name = N, pos = P, parents = Ps} = E,
    Content = [fix(X, [{N, P} | Ps]) || X <- lists:reverse(Kids)],
    [[E#xmlElement{content = Content} | Up] | Rest];
event(_, _, State) -> State.

parents(Stack) ->
    [{N, P, x} || {open, #xmlElement{name = N, pos = P}} <- Stack].

fix(#xmlText{} = T, Parents) -> T#xmlText{parents = Parents};
fix(X, _) -> X.

%% Only a name that exists already; any other can match no step of an expression.
atom(Name) ->
    try list_to_existing_atom(Name)
    catch error:badarg -> '$unknown'
    end.
