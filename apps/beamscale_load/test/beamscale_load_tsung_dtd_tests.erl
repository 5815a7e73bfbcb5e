%% Tsung 1.7's DTD walked (scripts/install-deps.sh installs tsung): every element and attribute
%% it declares is a name the reader takes as Tsung's, and each attribute is read, warned about
%% (the warning names it) or refused (at its line, naming it): none is dropped silently.
-module(beamscale_load_tsung_dtd_tests).

-export([attributes/0]).

-include_lib("eunit/include/eunit.hrl").
-include_lib("xmerl/include/xmerl.hrl").

-define(DTD, "/usr/share/tsung/tsung-1.0.dtd").
-define(KEYWORDS, ["CDATA", "NMTOKEN", "NMTOKENS", "ID", "IDREF", "IDREFS", "#IMPLIED",
                   "#REQUIRED", "#FIXED"]).

%% `{Elements, [{Element, Attribute}]}' as the DTD declares them.
dtd() ->
    {ok, Bin} = file:read_file(?DTD),
    Text = binary_to_list(Bin),
    Elements = [E || [E] <- match(Text, "<!ELEMENT\\s+([A-Za-z_:-]+)")],
    Attrs = [{E, A} || [Body] <- match(Text, "<!ATTLIST\\s+([^>]*)>"),
                       [E | As] <- [attlist(Body)], A <- As],
    {lists:usort(Elements), lists:usort(Attrs)}.

match(Text, Re) ->
    case re:run(Text, Re, [global, {capture, all_but_first, list}]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.

%% The element's name and its attributes' names: enumerations and quoted defaults taken out,
%% the types' and defaults' keywords left aside.
attlist(Body) ->
    Bare = lists:foldl(fun(Re, T) -> re:replace(T, Re, " ", [global, {return, list}]) end,
                       Body, ["\\([^)]*\\)", "\"[^\"]*\"", "'[^']*'"]),
    [T || T <- string:lexemes(Bare, " \t\r\n"), not lists:member(T, ?KEYWORDS)].

%% @doc The DTD's `{Element, Attribute}' pairs, as atoms (beamscale_load_tsung_dtd_read_tests).
-spec attributes() -> [{atom(), atom()}].
attributes() -> [{list_to_atom(E), list_to_atom(A)} || {E, A} <- element(2, dtd())].

names_test() ->
    {Elements, Attrs} = dtd(),
    %% The walk read the DTD: it declares 67 elements and their attributes.
    ?assertEqual(67, length(Elements)),
    ?assert(length(Attrs) > 150),
    {Known, KnownAttrs} = beamscale_load_tsung_guard:names(),
    ?assertEqual([], [E || E <- Elements, not lists:member(list_to_atom(E), Known)]),
    ?assertEqual([], lists:usort([A || {_, A} <- Attrs,
                                       not lists:member(list_to_atom(A), KnownAttrs)])).

%% Each attribute's status holds: a refused one is refused at its element's line naming both,
%% a warned one appears among the warnings, a read one passes the element's check.
attributes_test() ->
    {_, Attrs} = dtd(),
    Statuses = [{E, A, beamscale_load_tsung_dom:status(E, A)}
                || {E0, A0} <- Attrs, E <- [list_to_atom(E0)], A <- [list_to_atom(A0)]],
    Failed = [{E, A, S} || {E, A, S} <- Statuses, not holds(E, A, S)],
    ?assertEqual([], Failed),
    %% The table has each kind: the walk checks all three outcomes.
    ?assertEqual([read, refused, warned], lists:usort([S || {_, _, S} <- Statuses])).

holds(E, A, Status) ->
    El = #xmlElement{name = E, pos = 1, parents = [],
                     attributes = [#xmlAttribute{name = A, value = "x"}]},
    Ctx = #{lines => #{[{E, 1}] => 7}},
    Checked = try beamscale_load_tsung_dom:check_attrs(El, Ctx)
              catch throw:{tsung, Line, Msg} -> {Line, lists:flatten(Msg)}
              end,
    case Status of
        read -> Checked =:= ok;
        warned ->
            Want = "<" ++ atom_to_list(E) ++ " " ++ atom_to_list(A) ++ ">",
            Checked =:= ok andalso lists:any(fun(W) -> string:find(W, Want) =/= nomatch end,
                                             beamscale_load_tsung_dom:ignored(El));
        refused ->
            Want = lists:flatten(io_lib:format("attribute ~ts of <~ts> is not supported", [A, E])),
            case Checked of
                {7, Text} -> lists:prefix(Want, Text);
                _ -> false
            end
    end.
